import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  answer,
  continueThread,
  deleteRun,
  deleteThread,
  graph,
  isWaymarkError,
  MemoryStore,
  person,
  prune,
  resume,
  rewind,
  run,
  type Store,
  sweepRetention,
  Worker,
  type WorkQueue,
} from '../../src/index.js';
import { PostgresStore } from '../../src/postgres.js';
import { createApp } from '../../src/server.js';
import { SqliteStore } from '../../src/sqlite.js';
import { dropSchema, pgUrl, schemaName, skipReason, testPool } from '../store/fixtures/postgres.js';
import { fakeClock, manualClock } from '../support/clock.js';

// Deleting runs (issue 32 part 5): a run, a thread, the finished runs past an age, and each
// graph's retention applied by the hosts, on every store.

const day = 86_400_000;
const schema = schemaName();
const pgStores: PostgresStore[] = [];
afterAll(async () => {
  for (const store of pgStores) await store.close();
  if (skipReason !== undefined) return;
  const pool = testPool();
  await dropSchema(pool, schema);
  await pool.end();
});

const stores: [string, () => Store][] = [
  ['memory', () => new MemoryStore()],
  ['sqlite', () => new SqliteStore({ path: ':memory:' })],
  ...(skipReason === undefined
    ? [
        [
          'postgres',
          () => {
            const store = new PostgresStore({ connectionString: pgUrl, schema, poolSize: 2 });
            pgStores.push(store);
            return store;
          },
        ] as [string, () => Store],
      ]
    : []),
];

let ids = 0;
/** A run id no other test of this file uses: the PostgreSQL schema is shared by the file. */
const id = (name: string) => `${name}-${++ids}`;

const codeOf = (p: Promise<unknown>) =>
  p.then(
    () => 'resolved',
    (e: unknown) => (isWaymarkError(e) ? e.code : String(e)),
  );

const State = z.object({ text: z.string().default(''), ok: z.boolean().default(false) });
const review = graph('retention-review', { state: State })
  .node('draft', (s) => ({ text: `${s.text}!` }), { reads: ['text'], writes: ['text'] })
  .node('approve', person({ prompt: () => 'ok?', answer: z.object({ ok: z.boolean() }) }), {
    terminal: true,
  })
  .edge('draft', 'approve')
  .entry('draft')
  .compile();

const note = graph('retention-note', {
  state: State,
  retention: { succeeded: '30d', failed: '90d' },
})
  .node('write', (s) => ({ text: `${s.text}.` }), { terminal: true })
  .entry('write')
  .compile();

describe.each(stores)('deleting runs, with the %s store', (_name, makeStore) => {
  it('deletes a finished run; a waiting one only with force', async () => {
    const store = makeStore();
    const done = id('done');
    await run(note, { text: 'a' }, { store, runId: done });
    const gone = await deleteRun(store, done);
    expect(gone).toMatchObject({ id: done, graph: 'retention-note', status: 'succeeded' });
    expect(await store.getRun(done)).toBeUndefined();

    const asking = id('asking');
    await run(review, { text: 'a' }, { store, runId: asking });
    expect(await codeOf(deleteRun(store, asking))).toBe('RUN_WAITING');
    expect((await store.getRun(asking))?.status).toBe('waiting');
    await deleteRun(store, asking, { force: true });
    expect(await store.getRun(asking)).toBeUndefined();
    expect(await codeOf(deleteRun(store, asking))).toBe('RUN_NOT_FOUND');
  });

  it('refuses to delete a run a rewound run still reads from, until that run finishes', async () => {
    const store = makeStore();
    const source = id('source');
    const first = await run(review, { text: 'a' }, { store, runId: source });
    expect(first.status).toBe('waiting');
    const [asked] = await store.listWaits(source, { open: true });
    await answer(store, source, asked!.requestId, { ok: true }, { by: 'ed' });
    expect((await resume(store, review, source)).status).toBe('succeeded');
    const again = await rewind(store, review, source, { to: 'draft', runId: id('rewound') });
    expect(again.status).toBe('waiting');
    expect(await codeOf(deleteRun(store, source))).toBe('RUN_REFERENCED');
    const [again1] = await store.listWaits(again.runId, { open: true });
    await answer(store, again.runId, again1!.requestId, { ok: false }, { by: 'ed' });
    await resume(store, review, again.runId);
    await deleteRun(store, source);
    expect(await store.getRun(source)).toBeUndefined();
    expect((await store.getRun(again.runId))?.status).toBe('succeeded');
  });

  it('deletes a thread: its first run and every later turn', async () => {
    const store = makeStore();
    const t1 = id('t');
    await run(note, { text: 'hi' }, { store, runId: t1 });
    const t2 = await continueThread(store, note, t1, { text: 'more' }, { runId: id('t') });
    const t3 = await continueThread(store, note, t2.runId, { text: 'end' }, { runId: id('t') });
    const other = id('other');
    await run(note, { text: 'x' }, { store, runId: other });
    const gone = await deleteThread(store, t1);
    expect(gone.map((r) => r.id)).toEqual([t3.runId, t2.runId, t1]);
    for (const runId of [t1, t2.runId, t3.runId]) expect(await store.getRun(runId)).toBeUndefined();
    expect((await store.getRun(other))?.status).toBe('succeeded');
    expect(await codeOf(deleteThread(store, t1))).toBe('RUN_NOT_FOUND');
  });

  it('prunes the finished runs of a status past an age, and a dry run deletes nothing', async () => {
    const store = makeStore();
    const clock = manualClock(10 * day);
    const old = id('old');
    await run(note, { text: 'old' }, { store, runId: old, clock });
    const asking = id('old-asking');
    await run(review, {}, { store, runId: asking, clock });
    const now = fakeClock(45 * day);
    const young = id('young');
    await run(note, { text: 'new' }, { store, runId: young, clock: now });
    const options = {
      status: 'succeeded',
      olderThan: '30d',
      graph: 'retention-note',
      clock: now,
    } as const;
    const dry = await prune(store, { ...options, dryRun: true });
    expect(dry.deleted.map((r) => r.id)).toEqual([old]);
    expect(await store.getRun(old)).toBeDefined();
    const result = await prune(store, options);
    expect(result).toMatchObject({ deleted: [{ id: old, status: 'succeeded' }], more: false });
    expect(await store.getRun(old)).toBeUndefined();
    expect(await store.getRun(young)).toBeDefined();
    expect((await store.getRun(asking))?.status).toBe('waiting');
    expect(await codeOf(prune(store, { status: ['waiting' as never], olderThan: '1d' }))).toBe(
      'OPTIONS_INVALID',
    );
  });

  it("a sweep applies each graph's retention by status, in bounded batches", async () => {
    const store = makeStore();
    const at = manualClock(1 * day);
    const a = id('swept');
    const b = id('swept');
    await run(note, { text: 'a' }, { store, runId: a, clock: at });
    await run(note, { text: 'b' }, { store, runId: b, clock: at });
    const kept = id('kept');
    await run(review, {}, { store, runId: kept, clock: at });
    const later = fakeClock(32 * day);
    const first = await sweepRetention(store, [note, review], { clock: later, batch: 1 });
    expect(first).toHaveLength(1);
    const second = await sweepRetention(store, [note, review], { clock: later, batch: 1 });
    expect([...first, ...second].map((r) => r.id).sort()).toEqual([a, b].sort());
    expect(await store.getRun(kept)).toBeDefined();
  });
});

describe.each(stores)('a worker on the %s store', (_name, makeStore) => {
  it('sweeps at start and every retentionSweepMs, by its clock', async () => {
    const store = makeStore() as Store & WorkQueue;
    const old = id('w-old');
    await run(note, { text: 'a' }, { store, runId: old, clock: manualClock(1 * day) });
    const clock = fakeClock(20 * day);
    const errors: unknown[] = [];
    const worker = new Worker(store, [note], {
      clock,
      retentionSweepMs: day,
      // Its schedule loop sleeps on this clock too: a day, not a second at a time.
      schedulePollMs: day,
      pollMs: 50,
      onEvent: (e) => {
        if (e.type === 'error') errors.push(e.error);
      },
    });
    const stop = new AbortController();
    const working = worker.run(stop.signal);
    await clock.advance(0);
    expect(await store.getRun(old)).toBeDefined();
    // A day at a time, each once the sweeper sleeps again: a sweep over a network takes real time.
    // With the worker's schedule loop: two sleepers.
    for (let d = 0; d < 12; d++) {
      await expect.poll(() => clock.waiting()).toBe(2);
      await clock.advance(day);
    }
    await expect.poll(() => store.getRun(old)).toBeUndefined();
    stop.abort();
    await working;
    expect(errors).toEqual([]);
  });
});

describe('the server applies retention', () => {
  it('waymark serve sweeps the runs of its graphs, and stops when drained', async () => {
    const store = new SqliteStore({ path: ':memory:' });
    await run(note, { text: 'a' }, { store, runId: 's-old', clock: manualClock(1 * day) });
    await run(note, { text: 'b' }, { store, runId: 's-new', clock: manualClock(40 * day) });
    const clock = fakeClock(45 * day);
    const app = createApp({ store, graphs: [note], token: 't', clock, wakePollMs: 0 });
    await expect.poll(() => store.getRun('s-old')).toBeUndefined();
    expect(await store.getRun('s-new')).toBeDefined();
    await app.drain();
    expect(clock.waiting()).toBe(0);
    store.close();
  });
});

describe("a graph's retention option", () => {
  const declare = (retention: unknown) => () =>
    graph('r', { state: State, retention: retention as never })
      .node('a', () => ({}), { terminal: true })
      .entry('a')
      .compile();

  it('is kept in ms by status, out of the structural hash', () => {
    const kept = declare({ succeeded: '30d', cancelled: 1_000 })();
    expect(kept.retention).toEqual({ succeeded: 30 * day, cancelled: 1_000 });
    expect(kept.hash).toBe(declare(undefined)().hash);
  });

  it('refuses a status a run does not end with, or a value that is not a duration', () => {
    expect(declare({ waiting: '1d' })).toThrow(/DECLARATION_INVALID.*"waiting"/);
    expect(declare({ failed: 'soon' })).toThrow(/DECLARATION_INVALID.*retention.failed/);
  });
});
