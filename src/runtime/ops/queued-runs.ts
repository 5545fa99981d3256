import { keepsLimits } from '../../store/limits.js';
import type { RunRecord, Store } from '../../store/store.js';

/** A run queued behind its graph's concurrency limit: the limit, since when, its place in line. */
export interface QueuedRun {
  readonly runId: string;
  readonly graph: string;
  readonly key: string;
  readonly concurrency: number;
  /** When it was queued (ms since the epoch). */
  readonly since: number;
  /** 1 for the next run of its key to start. */
  readonly position: number;
}

/**
 * Which of the runs are queued for a slot, by run id. Only a run recorded `waiting` at seq 0 can
 * be one: one read for each such run, and one per key that has some queued.
 *
 * @example
 * const queued = await queuedRuns(store, await store.listRuns()); // Map { 'r7' => { key: 'c1', position: 1, ... } }
 */
export async function queuedRuns(
  store: Store,
  runs: readonly Pick<RunRecord, 'id' | 'status' | 'seq'>[],
): Promise<Map<string, QueuedRun>> {
  const found = new Map<string, QueuedRun>();
  if (!keepsLimits(store)) return found;
  const lines = new Map<string, string[]>();
  for (const run of runs) {
    if (run.status !== 'waiting' || run.seq !== 0) continue;
    const limit = await store.runLimit(run.id);
    if (limit?.state !== 'queued') continue;
    const line = `${limit.graph}\n${limit.key}`;
    let order = lines.get(line);
    if (order === undefined) {
      order = (await store.listQueued({ graph: limit.graph, key: limit.key })).map((q) => q.runId);
      lines.set(line, order);
    }
    const { graph, key, concurrency, since } = limit;
    found.set(run.id, {
      runId: run.id,
      graph,
      key,
      concurrency,
      since,
      position: order.indexOf(run.id) + 1,
    });
  }
  return found;
}

/**
 * Every run queued for a slot, oldest first (the order they start in), with its place in its
 * key's line; of one graph, or one key of it.
 *
 * @example
 * await listQueuedRuns(store, { graph: 'support' }); // [{ runId: 'r7', key: 'c1', position: 1, ... }]
 */
export async function listQueuedRuns(
  store: Store,
  filter: { readonly graph?: string; readonly key?: string; readonly limit?: number } = {},
): Promise<QueuedRun[]> {
  if (!keepsLimits(store)) return [];
  const places = new Map<string, number>();
  return (await store.listQueued(filter)).map((q) => {
    const line = `${q.graph}\n${q.key}`;
    const position = (places.get(line) ?? 0) + 1;
    places.set(line, position);
    const { runId, graph, key, concurrency, since } = q;
    return { runId, graph, key, concurrency, since, position };
  });
}
