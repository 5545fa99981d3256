import pg from 'pg';
import { afterAll, afterEach, beforeAll, beforeEach, expect, it, vi } from 'vitest';
import { cancel, enqueue, inspect } from '../../src/index.js';
import { PostgresStore } from '../../src/postgres.js';
import { systemClock } from '../../src/runtime/clock.js';
import { foldRun } from '../../src/runtime/worker/fold.js';
import { runTask } from '../../src/runtime/worker/run-task.js';
import type { WorkClaim } from '../../src/store/store.js';
import { sampleRun } from '../../src/testing/index.js';
import {
  analyzedPlan,
  describePg,
  dropSchema,
  pgUrl,
  schemaName,
  testPool,
  truncate,
} from '../store/fixtures/postgres.js';
import { fanGraph } from './fixtures/fan.js';

// The fold of a run served by workers, by hand: claim the run, fold it, claim its tasks, run
// them. Whatever a fold finds in the inbox, it commits in one transaction (one statement): a
// wide fan-out's completions do not cost a round trip and a flush each.

const schema = schemaName();
let pool: ReturnType<typeof testPool>;
let store: PostgresStore;

beforeAll(async () => {
  pool = testPool();
  store = await PostgresStore.open({ pool, schema });
});
beforeEach(async () => {
  await truncate(pool, schema);
});
afterEach(() => {
  vi.restoreAllMocks();
});
afterAll(async () => {
  await store?.close();
  if (pool !== undefined) {
    await dropSchema(pool, schema);
    await pool.end();
  }
});

const width = 20;
const fan = fanGraph('fold-fan', width);

const claim: WorkClaim = {
  owner: 'test',
  leaseMs: 30_000,
  graphs: [{ name: fan.name, hash: fan.hash }],
  limit: 100,
};

/** Claims the run and folds it once; what the fold said. */
async function foldOnce() {
  const [lease] = (await store.claimAndLoadRuns(claim)).map((c) => c.lease);
  expect(lease).toBeDefined();
  return foldRun(store, fan, lease!, systemClock);
}

/** Claims every due task and runs it, its result going to the run's inbox. */
async function runTasks(): Promise<number> {
  const tasks = await store.claimTasks(claim);
  const signal = new AbortController().signal;
  await Promise.all(tasks.map((t) => runTask(store, fan, t, { clock: systemClock, signal })));
  return tasks.length;
}

describePg('a fold commits what it folds in one transaction', () => {
  it("folds all of a fan-out's completions in one commit, and gives the lease up with it", async () => {
    await enqueue(store, fan, {}, { runId: 'r1' });
    await foldOnce(); // start: schedules split
    await runTasks();
    await foldOnce(); // split's completion: schedules the branches
    expect(await runTasks()).toBe(width);
    const commitAll = vi.spyOn(store, 'commitAll');
    const commit = vi.spyOn(store, 'commit');
    const folded = await foldOnce();
    expect(folded).toMatchObject({ committed: width, released: true });
    expect(commitAll).toHaveBeenCalledTimes(1);
    expect(commitAll.mock.calls[0]![1]).toHaveLength(width);
    expect(commit).not.toHaveBeenCalled();
    expect(await store.inbox('r1')).toEqual([]);
    // Released with the commit: the run is claimable at once, and the join scheduled `done`.
    expect((await store.listTasks('r1')).map((t) => t.node)).toEqual(['done']);
    await runTasks();
    expect(await foldOnce()).toMatchObject({ committed: 1, status: 'succeeded' });
    const view = await inspect(store, fan, 'r1');
    expect(view.snapshot.state.out).toEqual(Array.from({ length: width }, (_, i) => i));
  });

  it('a cancellation that lands while it folds: the fold takes it in and steps again, and nothing is lost', async () => {
    await enqueue(store, fan, {}, { runId: 'r1' });
    await foldOnce();
    await runTasks();
    await foldOnce();
    await runTasks();
    const seqBefore = (await store.getRun('r1'))!.seq;
    // The first group meets a run that moved on: a cancellation from another process.
    const real = store.commitAll.bind(store);
    let cancelled = false;
    vi.spyOn(store, 'commitAll').mockImplementation(async (runId, commits) => {
      if (!cancelled) {
        cancelled = true;
        await cancel(store, fan, runId, { reason: 'an operator stopped it' });
      }
      return real(runId, commits);
    });
    const folded = await foldOnce();
    expect(folded.status).toBe('cancelled');
    const record = await store.getRun('r1');
    expect(record?.status).toBe('cancelled');
    // The cancellation is the one event after the branches were scheduled; the completions
    // that came after it changed nothing and were only consumed.
    expect(record?.seq).toBe(seqBefore + 1);
    expect(await store.inbox('r1')).toEqual([]);
    expect(await store.listTasks('r1')).toEqual([]);
  });

  it('finishTasks writes many results in one statement, each fenced by its own lease, in the order given', async () => {
    await enqueue(store, fan, {}, { runId: 'r1' });
    await foldOnce();
    await runTasks();
    await foldOnce();
    const tasks = (await store.claimTasks(claim)).slice(0, 3);
    const [a, b, c] = tasks as [(typeof tasks)[0], (typeof tasks)[0], (typeof tasks)[0]];
    const held = await store.finishTasks([
      { task: c, attempt: '"c"', at: 1 },
      { task: { ...b, epoch: b.epoch + 1 }, attempt: '"stale"', at: 2 },
      { task: a, attempt: '"a"', at: 3 },
    ]);
    expect(held).toEqual([true, false, true]);
    expect((await store.inbox('r1')).map((i) => i.attempt)).toEqual(['"c"', '"a"']);
    const left = (await store.listTasks('r1')).map((t) => t.activation);
    expect(left).toContain(b.activation);
    expect(left).not.toContain(a.activation);
  });

  it('a claim reads only the runs that have something to fold: finished and waiting ones, however many, are not scanned', async () => {
    const { pgStatements } = await import('../../src/store/internal/pg-sql.js');
    // Two thousand finished runs of the claimed graph and two thousand waiting ones (asleep, or
    // for a person), older than the three still going: what a claim must not walk through.
    const finished = Array.from({ length: 2_000 }, (_, i) =>
      sampleRun(`done-${i}`, { graph: 'g', graphHash: 'h', createdAt: i, status: 'succeeded' }),
    );
    const waiting = Array.from({ length: 2_000 }, (_, i) =>
      sampleRun(`asleep-${i}`, {
        graph: 'g',
        graphHash: 'h',
        createdAt: 5_000 + i,
        status: 'waiting',
      }),
    );
    await store.createRuns([...finished, ...waiting]);
    await store.createRuns(
      ['a', 'b', 'c'].map((id, i) =>
        sampleRun(`live-${id}`, { graph: 'g', graphHash: 'h', createdAt: 10_000 + i }),
      ),
    );
    // A connection of its own: DEALLOCATE ALL on one of the pool's would drop the statements
    // the store prepared there.
    const client = new pg.Client({ connectionString: pgUrl });
    await client.connect();
    try {
      await client.query(`ANALYZE "${schema}".runs`);
      // The plan a prepared statement settles on after its first executions: one for any values.
      await client.query('SET plan_cache_mode = force_generic_plan');
      const statements = pgStatements(`"${schema}"`);
      for (const [name, { text }] of [['claim_and_load', statements.claimAndLoad]] as const) {
        const plan = JSON.stringify(
          await analyzedPlan(client, name, text, `('{g}', '{h}', 8, 'w', NULL, NULL, 1000)`),
        );
        expect(plan).toContain('"Index Name":"runs_running"');
        const removed = [...plan.matchAll(/"Rows Removed by Filter":(\d+)/g)].map((m) =>
          Number(m[1]),
        );
        expect(
          removed.every((n) => n < 100),
          `rows removed: ${removed}`,
        ).toBe(true);
      }
    } finally {
      await client.end();
    }
  });

  it('a claim that loads reads, in its one round trip, what loadRun and inbox read under the lease', async () => {
    await enqueue(store, fan, {}, { runId: 'r1' });
    await enqueue(store, fan, {}, { runId: 'r2' });
    for (let i = 0; i < 2; i++) {
      for (const lease of (await store.claimAndLoadRuns(claim)).map((c) => c.lease))
        await foldRun(store, fan, lease, systemClock);
      await runTasks();
    }
    const claimed = await store.claimAndLoadRuns(claim);
    expect(claimed.map((c) => c.lease.runId).sort()).toEqual(['r1', 'r2']);
    for (const c of claimed) {
      if ('error' in c) throw c.error;
      expect(c.run).toEqual(await store.loadRun(c.lease.runId));
      expect(c.inbox).toEqual(await store.inbox(c.lease.runId));
      expect(c.inbox.length).toBeGreaterThan(0);
      expect(c.lease).toMatchObject({
        owner: 'test',
        epoch: (await store.getRun(c.lease.runId))!.lease!.epoch,
      });
    }
    // Held: another claim takes neither.
    expect(await store.claimAndLoadRuns({ ...claim, owner: 'other' })).toEqual([]);
  });

  it('a claim that loads gives a damaged run with its error, and the others whole', async () => {
    await enqueue(store, fan, {}, { runId: 'ok' });
    await enqueue(store, fan, {}, { runId: 'bad' });
    await pool.query(`DELETE FROM "${schema}".snapshots WHERE run_id = 'bad'`);
    const claimed = await store.claimAndLoadRuns(claim);
    const bad = claimed.find((c) => c.lease.runId === 'bad')!;
    const ok = claimed.find((c) => c.lease.runId === 'ok')!;
    expect('error' in bad && (bad.error as { code: string }).code).toBe('STORE_CORRUPT');
    expect('run' in ok && ok.run.run.id).toBe('ok');
  });
});
