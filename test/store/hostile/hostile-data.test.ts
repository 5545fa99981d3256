import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  answer,
  graph,
  history,
  inspect,
  isWaymarkError,
  person,
  resume,
  run,
  type Store,
  type StoredEvent,
} from '../../../src/index.js';
import { PostgresStore } from '../../../src/postgres.js';
import { SqliteStore } from '../../../src/sqlite.js';
import { readHistory } from '../../../src/testing/index.js';
import { describePg, dropSchema, schemaName, testPool } from '../fixtures/postgres.js';
import { type Damage, damaged } from './hostile-store.js';

// Hostile stored data, on SQLite and PostgreSQL: one run reads back damaged (truncated JSON,
// values of the wrong type, a format from the future, rows of another graph or graph hash, no
// snapshot, a gap in its events, an offset twice), as bad rows or a user's buggy store would hand
// it over. Loading it (inspect, history, resume) is a coded error naming the run and what is
// wrong; the other runs keep working through the same store; nothing about it is rewritten.
// `history` reads a run from its first snapshot, so a damaged newest snapshot is no obstacle to
// it: those cases say so (`historyReads: false`), and history must then read the run as it was.
// (The stores' own checks of their rows are in test/store/sqlite-store.test.ts and
// postgres-store.test.ts, "corrupt rows".)

const hostile = graph('hostile', {
  state: z.object({ n: z.number().default(0), ok: z.boolean().default(false) }),
})
  .node('a', (s) => ({ n: s.n + 1 }))
  .node('b', (s) => ({ n: s.n + 1 }))
  .node('ask', person({ prompt: 'ok?', answer: z.object({ ok: z.boolean() }) }))
  .node('done', () => ({}), { terminal: true })
  .edge('a', 'b')
  .edge('b', 'ask')
  .edge('ask', 'done')
  .entry('a')
  .compile();

const json = (change: (value: Record<string, unknown>) => unknown) => (data: string) =>
  JSON.stringify(change(JSON.parse(data) as Record<string, unknown>));
const withEvent = (seq: number, event: string) => (events: readonly StoredEvent[]) =>
  events.map((e) => (e.seq === seq ? { ...e, event } : e));

/** Each damage, and the code loading the run must fail with (its message names the run). */
const cases: {
  name: string;
  damage: Damage;
  code: string;
  says: RegExp;
  historyReads?: false;
}[] = [
  {
    name: 'a truncated snapshot',
    damage: { latest: (d) => d.slice(0, Math.floor(d.length / 2)) },
    code: 'STORE_CORRUPT',
    says: /snapshot/,
    historyReads: false,
  },
  {
    name: 'a snapshot with values of the wrong type',
    damage: { latest: json((v) => ({ ...v, state: 'text', pending: {} })) },
    code: 'STORE_CORRUPT',
    says: /snapshot/,
    historyReads: false,
  },
  {
    name: 'an event that is not JSON',
    damage: { fromFirst: true, events: withEvent(1, '{"type":"compl') },
    code: 'STORE_CORRUPT',
    says: /event 1/,
  },
  {
    name: 'an event with values of the wrong type',
    damage: {
      fromFirst: true,
      events: withEvent(1, '{"type":"completed","activation":42,"update":"x"}'),
    },
    code: 'STORE_CORRUPT',
    says: /event 1/,
  },
  {
    name: 'a run written in a future store format',
    damage: { run: (r) => ({ ...r, format: 99 }) },
    code: 'STORE_VERSION_UNSUPPORTED',
    says: /format 99/,
  },
  {
    name: 'a run of another graph',
    damage: { run: (r) => ({ ...r, graph: 'someone-else' }) },
    code: 'GRAPH_MISMATCH',
    says: /someone-else/,
  },
  {
    name: 'rows written under another graph hash, with events to replay',
    damage: {
      fromFirst: true,
      snapshots: json((v) => ({ ...v, graph: { ...(v.graph as object), hash: 'f'.repeat(64) } })),
    },
    code: 'GRAPH_MISMATCH',
    says: /ffffffffffff/,
  },
  {
    name: 'a missing snapshot',
    damage: { noSnapshot: true },
    code: 'STORE_CORRUPT',
    says: /snapshot/,
  },
  {
    name: 'a gap in the events',
    damage: { fromFirst: true, events: (events) => events.filter((e) => e.seq !== 2) },
    code: 'STORE_CORRUPT',
    says: /seq/,
  },
  {
    name: 'an event offset twice',
    damage: {
      fromFirst: true,
      events: (events) => events.flatMap((e) => (e.seq === 2 ? [e, e] : [e])),
    },
    code: 'STORE_CORRUPT',
    says: /seq/,
  },
];

/** What loading the damaged run gave, per operation: its error's code, or 'loaded'. */
async function load(store: Store, runId: string, withHistory: boolean) {
  const outcomes: Record<string, unknown> = {};
  for (const [op, call] of [
    ['inspect', () => inspect(store, hostile, runId)],
    ...(withHistory ? ([['history', () => history(store, hostile, runId)]] as const) : []),
    ['resume', () => resume(store, hostile, runId)],
  ] as const) {
    try {
      await call();
      outcomes[op] = 'loaded';
    } catch (error) {
      outcomes[op] = error;
    }
  }
  return outcomes;
}

type Recorded = Awaited<ReturnType<typeof readHistory>>;
const withoutLease = (h: Recorded) => ({
  ...h,
  runs: h.runs.map((r) => ({ ...r, run: { ...r.run, lease: null } })),
});

function matrix(name: string, open: () => Promise<{ store: Store; close: () => Promise<void> }>) {
  describe(`hostile stored data on ${name}`, () => {
    it.each(cases)(
      '$name: a coded error naming the run; the other runs work; nothing rewritten',
      async ({ damage, code, says, historyReads }) => {
        const { store: real, close } = await open();
        try {
          await run(hostile, {}, { store: real, runId: 'victim', snapshotEvery: 100 });
          await run(hostile, {}, { store: real, runId: 'other', snapshotEvery: 100 });
          const before = await readHistory(real, ['victim']);
          const { store, writes } = damaged(real, 'victim', damage);

          const outcomes = await load(store, 'victim', historyReads !== false);
          for (const [op, outcome] of Object.entries(outcomes)) {
            const what = `${op}: ${String((outcome as Error)?.stack ?? outcome)}`;
            expect(isWaymarkError(outcome), what).toBe(true);
            expect((outcome as { code: string }).code, what).toBe(code);
            expect((outcome as Error).message, what).toContain('"victim"');
            expect((outcome as Error).message, what).toMatch(says);
          }
          if (historyReads === false) {
            const { steps } = await history(store, hostile, 'victim');
            expect(steps.map((s) => s.seq)).toEqual([0, 1, 2, 3]);
          }
          expect(writes.calls).toEqual([]);
          // Resume reads the run only once it holds its lease, and gives the lease back when the
          // run cannot be read: the lease's epoch counts that; nothing else about the run moves.
          const after = await readHistory(real, ['victim']);
          expect(after.runs[0]!.run.lease?.live).toBe(false);
          expect(withoutLease(after)).toEqual(withoutLease(before));

          // The other run, through the same store, is answered and finishes.
          await answer(store, 'other', 'other/ask:1', { ok: true }, { by: 'ana' });
          expect((await resume(store, hostile, 'other')).status).toBe('succeeded');
        } finally {
          await close();
        }
      },
      60_000,
    );
  });
}

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

matrix('SQLite', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'waymark-hostile-'));
  dirs.push(dir);
  const store = new SqliteStore({ path: join(dir, 'runs.db') });
  return { store, close: () => store.close() };
});

describePg('PostgreSQL', () => {
  matrix('PostgreSQL', async () => {
    const pool = testPool();
    const schema = schemaName();
    const store = await PostgresStore.open({ pool, schema });
    return {
      store,
      close: async () => {
        await store.close();
        await dropSchema(pool, schema);
        await pool.end();
      },
    };
  });
});
