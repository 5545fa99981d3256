import type { CompiledGraph } from '../../graph/compiled.js';
import type { FinishedStatus } from '../../graph/retention.js';
import type { DeletedRun } from '../../store/run-removal.js';
import type { Store } from '../../store/store.js';
import type { Clock } from '../clock.js';
import { prune } from './retention.js';

/** How many runs one sweep deletes at most, unless told: a sweep never holds its host up for long. */
export const defaultSweepBatch = 100;

/** How often a host sweeps unless told (`retentionSweepMs`): once a minute. */
export const defaultRetentionSweepMs = 60_000;

/**
 * One retention sweep: for each graph that declares `retention`, deletes its finished runs
 * past their status's time to keep, `batch` runs at most in all (the next sweep takes the
 * rest). What workers and `waymark serve` run every `retentionSweepMs`; several hosts sweeping
 * at once delete each run once (a run gone already is passed over).
 *
 * @example
 * const deleted = await sweepRetention(store, [blog], { batch: 50 });
 */
export async function sweepRetention(
  store: Store,
  graphs: readonly CompiledGraph[],
  options: { readonly clock?: Clock; readonly batch?: number } = {},
): Promise<DeletedRun[]> {
  let left = options.batch ?? defaultSweepBatch;
  const deleted: DeletedRun[] = [];
  const seen = new Set<string>();
  for (const graph of graphs) {
    // Two versions of one graph share its name: swept once, by the first that declares it.
    if (graph.retention === undefined || seen.has(graph.name)) continue;
    seen.add(graph.name);
    for (const [status, keepMs] of Object.entries(graph.retention) as [FinishedStatus, number][]) {
      if (left <= 0) return deleted;
      const result = await prune(store, {
        status,
        olderThan: keepMs,
        graph: graph.name,
        limit: left,
        ...(options.clock && { clock: options.clock }),
      });
      deleted.push(...result.deleted);
      left -= result.deleted.length;
    }
  }
  return deleted;
}

/** Options of {@link sweepEvery}. */
export interface SweepLoopOptions {
  /** Between sweeps; the first is at once. */
  readonly everyMs: number;
  readonly clock: Clock;
  readonly batch?: number;
  /** A sweep that failed (the store unreachable for a moment): the next one tries again. */
  readonly onError?: (error: unknown) => void;
  readonly onSwept?: (deleted: readonly DeletedRun[]) => void;
}

/**
 * Sweeps (see {@link sweepRetention}) until `signal` aborts: the loop a worker and `waymark
 * serve` run beside their own when a graph they host declares `retention`.
 *
 * @example
 * await sweepEvery(store, graphs, { everyMs: 60_000, clock: systemClock }, signal);
 */
export async function sweepEvery(
  store: Store,
  graphs: readonly CompiledGraph[],
  options: SweepLoopOptions,
  signal: AbortSignal,
): Promise<void> {
  if (!graphs.some((g) => g.retention !== undefined) || options.everyMs <= 0) return;
  while (!signal.aborted) {
    try {
      const deleted = await sweepRetention(store, graphs, {
        clock: options.clock,
        ...(options.batch !== undefined && { batch: options.batch }),
      });
      if (deleted.length > 0) options.onSwept?.(deleted);
    } catch (error) {
      options.onError?.(error);
    }
    await options.clock.sleep(options.everyMs, signal);
  }
}
