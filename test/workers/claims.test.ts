import { afterEach, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { type CompiledGraph, END, enqueue, graph, inspect, Worker } from '../../src/index.js';
import { PostgresStore } from '../../src/postgres.js';
import type { WorkClaim } from '../../src/store/store.js';
import { describePg, pgStoreForFile } from '../store/fixtures/postgres.js';
import { fanGraph, sleep } from './fixtures/fan.js';

// How a worker claims tasks as its slots free. Bodies that end together (a wave of branches
// whose timers fire in one turn of the event loop) are claimed for together: one claim for all
// the slots they free. It used to claim for the first slot at once and for the rest once that
// claim returned, which put a round trip between most of a wave's nodes and their successors.
//
// A claim that finds fewer tasks than it has room for has emptied the queue as far as this
// worker can take from it: while the store is told of new tasks (LISTEN), the slots that free
// afterwards wait for that news instead of each asking an empty queue again; news that comes
// while every slot is busy is kept for the next slot that frees. Untold (polling only, or its
// LISTEN connection down), they claim as they free.
//
// A fold's claim of runs is looked at again at once when it was full, or when a fold gave a
// run back: another worker may have written a result meanwhile and found the run held, and it
// counts on the holder to claim after giving it back. A run this worker goes on driving keeps
// its lease, so nobody waits on it, and a run that cannot be read cannot be folded by anyone:
// no claim follows those but for news (or the next poll).
//
// The branches of a wave here end in one turn whatever the machine's load: they wait for one
// timer of the wave, then each for an immediate of its own, so they end one by one, with the
// microtasks run between them as between timers that fire together.

const db = pgStoreForFile();

afterEach(() => {
  vi.restoreAllMocks();
});

const concurrency = 4;
const width = 3 * concurrency;
let wave: Promise<void> | undefined;
async function endTogether(): Promise<void> {
  wave ??= new Promise((resolve) =>
    setTimeout(() => {
      wave = undefined;
      resolve();
    }, 30),
  );
  await wave;
  await new Promise((resolve) => setImmediate(resolve));
}
const waves = fanGraph('claim-waves', width, endTogether);
const pair = fanGraph('claim-pair', 2, sleep(30));
const one = graph('claim-one', { state: z.object({ done: z.boolean().default(false) }) })
  .node('only', () => ({ done: true }))
  .edge('only', END)
  .entry('only')
  .compile();

/**
 * One worker on `store` (concurrency 4, and no poll within a test: whatever claims happen, a
 * slot or a notification asked for) runs each of `runIds` of `g` to its end, one after another,
 * then waits a little for any claim its last slots would ask for.
 */
async function runOn(store: PostgresStore, g: CompiledGraph, runIds: readonly string[]) {
  const stop = new AbortController();
  const working = new Worker(store, [g], { concurrency, pollMs: 60_000 }).run(stop.signal);
  try {
    for (;;) {
      if ((await store.listWorkers()).length === 1) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    // Registered, and listening too before the run is there to wake it.
    await new Promise((resolve) => setTimeout(resolve, 100));
    for (const runId of runIds) {
      await enqueue(store, g, {}, { runId });
      const until = Date.now() + 10_000;
      while ((await store.getRun(runId))?.status !== 'succeeded') {
        expect(Date.now()).toBeLessThan(until);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  } finally {
    stop.abort();
    await working;
  }
}

/** How many tasks (or runs) each claim of `method` on `store` took, from now on. */
function claimCounts(store: PostgresStore, method: 'claimTasks' | 'claimAndLoadRuns'): number[] {
  const counts: number[] = [];
  const claim = store[method].bind(store) as (claim: WorkClaim) => Promise<readonly unknown[]>;
  vi.spyOn(store, method).mockImplementation((async (c: WorkClaim) => {
    const got = await claim(c);
    counts.push(got.length);
    return got;
  }) as never);
  return counts;
}

describePg('claims of tasks as slots free', () => {
  it('the slots that bodies ending together free are claimed for in one claim', async () => {
    const claims = vi.spyOn(PostgresStore.prototype, 'claimTasks');
    // One worker, so every wave is its own: its bodies start in one turn and end in one.
    await runOn(db.store, waves, ['waves']);
    const view = await inspect(db.store, waves, 'waves');
    expect(view.snapshot.state.out).toEqual(Array.from({ length: width }, (_, i) => i));
    // Every claim asked for every slot: never 1 and then the other 3.
    const limits = claims.mock.calls.map(([claim]) => claim.limit);
    expect(limits.length).toBeGreaterThanOrEqual(width / concurrency);
    expect(limits).toEqual(limits.map(() => concurrency));
  }, 15_000);

  it('after a claim that emptied the queue, freed slots claim nothing until new tasks are told', async () => {
    const taken = claimCounts(db.store, 'claimTasks');
    await runOn(db.store, pair, ['told']);
    // The claim at start finds nothing; the run's two branches come in one claim (2 of 4
    // slots: the queue is empty); their ends and the join's free slots, and nobody asks again.
    expect(taken).toEqual([0, 2]);
  }, 15_000);

  it('news of tasks that came while every slot was busy is claimed for by the next slot to free', async () => {
    // One slot. The first run's node holds it (run where it was folded) while the second run
    // is folded: its node becomes a task, told to a worker with no room for it. The first
    // node's end must claim it; nothing else would until the next poll (a minute here).
    const slow = graph('claim-slow', { state: z.object({ done: z.boolean().default(false) }) })
      .node('only', async () => {
        await new Promise((resolve) => setTimeout(resolve, 150));
        return { done: true };
      })
      .edge('only', END)
      .entry('only')
      .compile();
    const stop = new AbortController();
    const working = new Worker(db.store, [slow], { concurrency: 1, pollMs: 60_000 }).run(
      stop.signal,
    );
    try {
      for (;;) {
        if ((await db.store.listWorkers()).length === 1) break;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
      const tasks = claimCounts(db.store, 'claimTasks');
      await enqueue(db.store, slow, {}, { runId: 'holds' });
      await new Promise((resolve) => setTimeout(resolve, 50));
      await enqueue(db.store, slow, {}, { runId: 'waits' });
      const until = Date.now() + 5_000;
      while ((await db.store.getRun('waits'))?.status !== 'succeeded') {
        expect(Date.now(), `claims of tasks: ${tasks}`).toBeLessThan(until);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      expect(tasks).toContain(1);
    } finally {
      stop.abort();
      await working;
    }
  }, 15_000);

  it('while the store is not told of new tasks (LISTEN down, or notify: false), a freed slot claims', async () => {
    // As if its listening connection were down: nothing would tell the worker of new tasks.
    vi.spyOn(db.store, 'listening', 'get').mockReturnValue(false);
    const taken = claimCounts(db.store, 'claimTasks');
    await runOn(db.store, pair, ['untold']);
    // The branches' claim, then one at least for the slots that freed after it.
    const branches = taken.indexOf(2);
    expect(branches).toBeGreaterThan(0);
    expect(taken.slice(branches + 1).length).toBeGreaterThan(0);
  }, 15_000);
});

describePg('claims of runs', () => {
  it('a run folded and driven on by its worker is not followed by a claim that finds nothing', async () => {
    const taken = claimCounts(db.store, 'claimAndLoadRuns');
    await runOn(db.store, one, ['a', 'b']);
    // The claim at start, then one per run: each driven to its end within its own lease.
    expect(taken).toEqual([0, 1, 1]);
  }, 15_000);

  it('a worker that never folds (folds: 0) claims no runs, and does not ask again and again', async () => {
    const taken = claimCounts(db.store, 'claimAndLoadRuns');
    const stop = new AbortController();
    const working = new Worker(db.store, [one], { folds: 0, pollMs: 60_000 }).run(stop.signal);
    await new Promise((resolve) => setTimeout(resolve, 300));
    stop.abort();
    await working;
    expect(taken).toEqual([]);
  });

  it('a run that cannot be read is not claimed again and again: the next poll tries it again', async () => {
    const told = db.store.notifiedOf('runs');
    await enqueue(db.store, one, {}, { runId: 'damaged' });
    await db.pool.query(`DELETE FROM "${db.schema}".snapshots WHERE run_id = 'damaged'`);
    // The enqueue's wake-up reaches the store before the worker starts, if it listens already:
    // the worker's first claim is the one that finds the run, and no news comes after it.
    for (let i = 0; i < 200 && db.store.listening && db.store.notifiedOf('runs') === told; i++)
      await new Promise((resolve) => setTimeout(resolve, 10));
    const taken = claimCounts(db.store, 'claimAndLoadRuns');
    const errors: unknown[] = [];
    const stop = new AbortController();
    const working = new Worker(db.store, [one], {
      pollMs: 60_000,
      onEvent: (event) => {
        if (event.type === 'error') errors.push(event.error);
      },
    }).run(stop.signal);
    await new Promise((resolve) => setTimeout(resolve, 300));
    stop.abort();
    await working;
    // Claimed once at start, its error told once; it waits for the next poll, not a loop.
    expect(taken).toEqual([1]);
    expect(errors).toEqual([expect.objectContaining({ code: 'STORE_CORRUPT' })]);
  });
});
