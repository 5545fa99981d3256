import { afterEach, expect, it, vi } from 'vitest';
import { enqueue, inspect, Worker } from '../../src/index.js';
import { PostgresStore } from '../../src/postgres.js';
import { systemClock } from '../../src/runtime/clock.js';
import { foldRun } from '../../src/runtime/worker/fold.js';
import { runTask } from '../../src/runtime/worker/run-task.js';
import type { ClaimedTask, WorkClaim } from '../../src/store/store.js';
import { describePg, pgStoreForFile, pgUrl } from '../store/fixtures/postgres.js';
import { fanGraph, sleep } from './fixtures/fan.js';

// Who folds a task's result. A worker that folds folds the results it writes itself, and wakes
// no other worker for them: every result used to wake every idle worker, whose claims then
// raced for a run that one of them held already (with 4 workers, a 100-way fan-out made 143
// claims of its run, 12 of which folded anything). Wake-ups (a cancellation, an answer, a run a
// draining worker gave back) and the results of a worker that never folds still wake them all.

const db = pgStoreForFile();

afterEach(() => {
  vi.restoreAllMocks();
});

const width = 10;
const fan = fanGraph('wake-fan', width, sleep(10));

const claim: WorkClaim = {
  owner: 'test',
  leaseMs: 30_000,
  graphs: [{ name: fan.name, hash: fan.hash }],
  limit: 100,
};

/** Resolves once `store` has seen more `runs` notifications than `since`, or after `ms`. */
async function notifiedAfter(store: PostgresStore, since: number, ms: number): Promise<number> {
  await store.waitForWork(ms, new AbortController().signal, since, 'runs');
  return store.notifiedOf('runs');
}

/** Runs `fan` to the end on `workers` (each on a store of its own), which never poll. */
async function runOn(runId: string, ...workers: ConstructorParameters<typeof Worker>[2][]) {
  const stores = workers.map(
    () =>
      new PostgresStore({
        connectionString: pgUrl,
        schema: db.schema,
        poolSize: 4,
        // Within a third of the workers' 5 s lease, as a worker asks of its store.
        statementTimeoutMs: 1_000,
        queryTimeoutMs: 1_500,
      }),
  );
  const stop = new AbortController();
  const working = workers.map((options, i) =>
    new Worker(stores[i]!, [fan], { leaseMs: 5_000, ...options, pollMs: 60_000 }).run(stop.signal),
  );
  try {
    // Registered and listening before the run is there to wake them.
    for (;;) {
      if ((await db.store.listWorkers()).length === workers.length) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
    const started = Date.now();
    await enqueue(db.store, fan, {}, { runId });
    for (;;) {
      const run = await db.store.getRun(runId);
      if (run?.status === 'succeeded') return Date.now() - started;
      expect(run?.status).toBe('running');
      // A wake-up missed would leave the run to the next poll, a minute away.
      expect(Date.now() - started).toBeLessThan(10_000);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  } finally {
    stop.abort();
    await Promise.all(working);
    await Promise.all(stores.map((s) => s.close()));
  }
}

describePg("who is woken to fold a task's result", () => {
  it('a result written with wake: false notifies no one; a wake-up does, and so does a result written with wake: true', async () => {
    const listener = new PostgresStore({ connectionString: pgUrl, schema: db.schema });
    const clock = systemClock;
    const signal = new AbortController().signal;
    try {
      const before = await notifiedAfter(listener, 0, 1); // listening from now on
      const tasksBefore = listener.notifiedOf('tasks');
      await enqueue(db.store, fan, {}, { runId: 'r1' }); // its wake-up: 'runs'
      const [lease] = (await db.store.claimAndLoadRuns(claim)).map((c) => c.lease);
      await foldRun(db.store, fan, lease!, systemClock); // schedules split: 'tasks'
      const [split] = await db.store.claimTasks(claim);
      const quiet = (t: ClaimedTask, attempt: string, at: number) =>
        db.store.finishTasks([{ task: t, attempt, at }], { wake: false }).then(([held]) => held!);
      expect(await runTask(db.store, fan, split!, { clock, signal, finish: quiet })).toBe(true);
      await db.store.wake('r1', Date.now()); // 'runs'
      const [lease2] = (await db.store.claimAndLoadRuns(claim)).map((c) => c.lease);
      await foldRun(db.store, fan, lease2!, systemClock); // folds split, schedules the branches: 'tasks'
      // Notifications arrive in the order their transactions committed: once the branches'
      // is here, every one before it is too. The enqueue's and the wake-up's, not the result's.
      while (listener.notifiedOf('tasks') < tasksBefore + 2)
        await listener.waitForWork(5_000, signal, listener.notifiedOf('tasks'), 'tasks');
      const afterWake = listener.notifiedOf('runs');
      expect(afterWake).toBe(before + 2);

      const [branch] = await db.store.claimTasks({ ...claim, limit: 1 });
      expect(await runTask(db.store, fan, branch!, { clock, signal })).toBe(true); // wakes
      expect(await notifiedAfter(listener, afterWake, 5_000)).toBe(afterWake + 1);
    } finally {
      await listener.close();
    }
  });

  it('two workers that fold finish a fan-out without polling: each folds the results it wrote, and wakes no one for them', async () => {
    const finishes = vi.spyOn(PostgresStore.prototype, 'finishTasks');
    await runOn('both', { concurrency: 3 }, { concurrency: 3 });
    expect(finishes).toHaveBeenCalled();
    for (const [, options] of finishes.mock.calls) expect(options).toEqual({ wake: false });
    const view = await inspect(db.store, fan, 'both');
    expect(view.snapshot.state.out).toEqual(Array.from({ length: width }, (_, i) => i));
  }, 15_000);

  it('a worker that never folds wakes the one that does, which runs no node itself', async () => {
    // Every node is the executor's, so only a notification can bring its results to the
    // folder, which writes none of its own.
    await runOn('split-roles', { concurrency: 0 }, { folds: 0, concurrency: 10 });
    const view = await inspect(db.store, fan, 'split-roles');
    expect(view.snapshot.state.out).toEqual(Array.from({ length: width }, (_, i) => i));
  }, 15_000);
});
