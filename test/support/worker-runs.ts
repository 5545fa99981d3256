import type { CompiledGraph, Store } from '../../src/index.js';
import { Worker } from '../../src/index.js';
import type { WorkQueue } from '../../src/store/work-queue.js';

/**
 * Runs one `Worker` on `store` with `graphs` until every run in `runIds` has stopped running
 * (or 20 s pass: then it throws), then stops the worker and waits for it to end.
 *
 * @example
 * const id = await enqueue(db.store, g, {});
 * await workUntilSettled(db.store, [g], [id]);
 */
export async function workUntilSettled(
  store: Store & WorkQueue,
  graphs: readonly CompiledGraph[],
  runIds: readonly string[],
): Promise<void> {
  const stop = new AbortController();
  const working = new Worker(store, graphs, { pollMs: 50, leaseMs: 5_000 }).run(stop.signal);
  try {
    const until = Date.now() + 20_000;
    for (;;) {
      const records = await Promise.all(runIds.map((id) => store.getRun(id)));
      if (records.every((r) => r !== undefined && r.status !== 'running')) return;
      if (Date.now() > until) throw new Error(`runs ${runIds.join(', ')} did not settle`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  } finally {
    stop.abort();
    await working;
  }
}

/**
 * Runs `count` workers of `graphs` on `store` (5 s leases, a poll of `pollMs`) while `body`
 * runs, then stops them and waits for them to end.
 *
 * @example
 * await withWorkers(store, [g], 2, async () => expect(await untilStatus(store, id, ['succeeded'])).toBe('succeeded'));
 */
export async function withWorkers<T>(
  store: Store & WorkQueue,
  graphs: ConstructorParameters<typeof Worker>[1],
  count: number,
  body: () => Promise<T>,
  pollMs = 50,
): Promise<T> {
  const stop = new AbortController();
  const running = Array.from({ length: count }, () =>
    new Worker(store, graphs, { leaseMs: 5_000, pollMs }).run(stop.signal),
  );
  try {
    return await body();
  } finally {
    stop.abort();
    await Promise.all(running);
  }
}

/** Polls the run's row until its status is one of `statuses` (15 s at most: then it throws). */
export async function untilStatus(
  store: Store,
  runId: string,
  statuses: readonly string[],
): Promise<string> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const status = (await store.getRun(runId))?.status;
    if (status !== undefined && statuses.includes(status)) return status;
    if (Date.now() > deadline) throw new Error(`run ${runId} is still ${status}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
