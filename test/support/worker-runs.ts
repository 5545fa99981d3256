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
