import { keepsLimits } from '../store/limits.js';
import type { RunRecord, Store } from '../store/store.js';
import { iso } from './time.js';

/** A queued run as `ls` and `show` tell it: the limit it waits behind, and its place in line. */
export interface QueuedView {
  readonly graph: string;
  readonly key: string;
  readonly concurrency: number;
  readonly since: string;
  /** 1 for the next run of its key to start. */
  readonly position: number;
}

/**
 * Which of the runs are queued behind their graph's concurrency limit, by run id. Only a run
 * recorded `waiting` at seq 0 can be one: one read for each such run, and one per key queued.
 *
 * @example
 * const queued = await queuedViews(store, runs); // Map { 'r7' => { key: 'c1', position: 1, ... } }
 */
export async function queuedViews(
  store: Store,
  runs: readonly RunRecord[],
): Promise<Map<string, QueuedView>> {
  const views = new Map<string, QueuedView>();
  if (!keepsLimits(store)) return views;
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
    views.set(run.id, {
      graph: limit.graph,
      key: limit.key,
      concurrency: limit.concurrency,
      since: iso(limit.since),
      position: order.indexOf(run.id) + 1,
    });
  }
  return views;
}

/**
 * The line `ls` and `show` print for a queued run.
 *
 * @example
 * queuedText(view); // 'queued for key "c1" (at most 2 at once), 1st in line'
 */
export function queuedText(view: QueuedView): string {
  return `queued for key "${view.key}" (at most ${view.concurrency} at once), number ${view.position} in line since ${view.since}`;
}
