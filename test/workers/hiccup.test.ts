import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { z } from 'zod';
import { all, append, enqueueAll, graph, run, Worker } from '../../src/index.js';
import { PostgresStore } from '../../src/postgres.js';
import { describePg, dropSchema, pgUrl, schemaName, testPool } from '../store/fixtures/postgres.js';

// Infrastructure never fails a run (DESIGN.md section 7): while every connection of the workers
// is terminated every 200 ms (DBOS tests the same thing as "dbhiccup"), runs whose nodes have
// no `retry` at all, each with one effect, all succeed, and every effect is applied once. A
// terminated connection in a commit, a claim, a renewal, a task's result or a ctx.effect is
// taken again after a pause; only a node's own failure may fail a run.

const runs = Number(process.env.WAYMARK_HICCUP_RUNS ?? 200);
const schema = schemaName();
const app = `waymark-hiccup-${schema.slice(-12)}`;
let control: pg.Pool;
let store: PostgresStore;

/**
 * The receiver of the effects: it applies each idempotency key once, however often it is sent
 * (at-least-once delivery with a stable key, DESIGN.md section 6), and counts the deliveries.
 */
const applied = new Set<string>();
const deliveries = new Map<string, number>();
async function receive(key: string): Promise<string> {
  deliveries.set(key, (deliveries.get(key) ?? 0) + 1);
  await new Promise((resolve) => setTimeout(resolve, 2));
  applied.add(key);
  return `receipt ${key}`;
}

const State = z.object({
  items: z.array(z.string()).default(['a', 'b']),
  receipts: z.array(z.string()).default([]),
});
const effect =
  (name: string) =>
  async (
    _s: unknown,
    ctx: { effect: <T>(n: string, fn: (k: string) => Promise<T>) => Promise<T> },
  ) => ({
    receipts: [await ctx.effect(name, receive)],
  });
// A start, a map of two branches (tasks for any worker) and a join (held by its folder): no
// node has a retry.
const hiccup = graph('hiccup', { state: State, reducers: { receipts: append } })
  .node('start', effect('start'))
  .node('each', effect('each'), { writes: ['receipts'] })
  .node('join', effect('join'), { join: all(), terminal: true })
  .map('start', { over: 'items', branch: 'each', join: 'join' })
  .edge('each', 'join')
  .entry('start')
  .compile();

beforeAll(async () => {
  control = testPool();
  store = await PostgresStore.open({ pool: control, schema });
});
afterAll(async () => {
  await store?.close();
  if (control !== undefined) {
    await dropSchema(control, schema);
    await control.end();
  }
});

describePg('connections terminated every 200 ms', () => {
  it(`${runs} runs whose nodes have no retry all succeed, in workers and in process, each effect applied once`, async () => {
    const pools = [0, 1].map(() => {
      const pool = new pg.Pool({ connectionString: pgUrl, application_name: app, max: 8 });
      pool.on('error', () => {});
      return pool;
    });
    const stores = await Promise.all(pools.map((pool) => PostgresStore.open({ pool, schema })));
    const stop = new AbortController();
    const errors: unknown[] = [];
    const workers = stores.map((s) =>
      new Worker(s, [hiccup], {
        pollMs: 100,
        leaseMs: 3_000,
        onEvent: (e) => e.type === 'error' && errors.push(e.error),
      }).run(stop.signal),
    );
    let terminated = 0;
    const killer = setInterval(() => {
      void control
        .query(
          'SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity WHERE application_name = $1',
          [app],
        )
        .then((r) => {
          terminated += r.rows[0].n as number;
        })
        .catch(() => {});
    }, 200);
    try {
      const ids = await enqueueAll(
        store,
        hiccup,
        Array.from({ length: runs }, () => ({})),
      );
      // In process too, on a store whose connections are terminated the same way.
      const local = await Promise.all(
        Array.from({ length: 10 }, () => run(hiccup, {}, { store: stores[0]! })),
      );
      const deadline = Date.now() + 120_000;
      for (;;) {
        const { rows } = await control.query(
          `SELECT status, count(*)::int AS n FROM "${schema}".runs GROUP BY status`,
        );
        const done = rows.find((r) => r.status === 'succeeded')?.n ?? 0;
        if (done >= ids.length + local.length) break;
        const failed = rows.filter((r) => r.status !== 'succeeded' && r.status !== 'running');
        expect(failed).toEqual([]);
        expect(Date.now()).toBeLessThan(deadline);
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      expect(local.map((r) => r.status)).toEqual(local.map(() => 'succeeded'));
      // Four effects a run (start, two branches, the join), each applied once.
      const total = (ids.length + local.length) * 4;
      expect(applied.size).toBe(total);
      // One recorded result per key: every effect's outcome was recorded once, and every
      // node that read it back got that one.
      const { rows } = await control.query(
        `SELECT count(*)::int AS n, count(DISTINCT key)::int AS keys FROM "${schema}".effects`,
      );
      expect(rows[0]).toEqual({ n: total, keys: total });
      const resent = [...deliveries.values()].filter((n) => n > 1).length;
      expect(terminated).toBeGreaterThan(0);
      process.stdout.write(
        `hiccup: ${ids.length} enqueued and ${local.length} in-process runs, ${terminated} connections terminated, ${total} effects, ${resent} delivered more than once (deduped by key), ${errors.length} store errors ridden out\n`,
      );
    } finally {
      clearInterval(killer);
      stop.abort();
      await Promise.allSettled(workers);
      for (const s of stores) await s.close().catch(() => {});
      for (const pool of pools) await pool.end().catch(() => {});
    }
  }, 180_000);
});
