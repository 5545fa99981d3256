import { queuedRuns } from '../runtime/ops/queued-runs.js';
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
 * Which of the runs are queued behind their graph's concurrency limit, by run id.
 *
 * @example
 * const queued = await queuedViews(store, runs); // Map { 'r7' => { key: 'c1', position: 1, ... } }
 */
export async function queuedViews(
  store: Store,
  runs: readonly RunRecord[],
): Promise<Map<string, QueuedView>> {
  const views = new Map<string, QueuedView>();
  for (const [id, q] of await queuedRuns(store, runs)) {
    const { graph, key, concurrency, position } = q;
    views.set(id, { graph, key, concurrency, since: iso(q.since), position });
  }
  return views;
}

/**
 * The line `ls` and `show` print for a queued run.
 *
 * @example
 * queuedText(view); // 'queued for key "c1" (at most 2 at once), number 1 in line since ...'
 */
export function queuedText(view: QueuedView): string {
  return `queued for key "${view.key}" (at most ${view.concurrency} at once), number ${view.position} in line since ${view.since}`;
}
