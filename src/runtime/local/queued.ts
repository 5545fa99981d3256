import { WaymarkError } from '../../error/waymark-error.js';
import type { CompiledGraph } from '../../graph/compiled.js';
import { keepsLimits, type RunLimitRecord } from '../../store/limits.js';
import type { Store } from '../../store/store.js';
import type { Clock } from '../clock.js';

/** How often a run queued in this process looks whether its slot came, on its clock. */
export const queuedPollMs = 1_000;

/**
 * The run's limit row while it is queued for a slot (its graph's `limits`); undefined when it
 * holds one, has none, or its store keeps no limits. One read, for a limited graph only.
 *
 * @example
 * if (await queuedFor(store, graph, runId)) return; // not started: it waits for a slot
 */
export async function queuedFor(
  store: Store,
  graph: CompiledGraph,
  runId: string,
): Promise<RunLimitRecord | undefined> {
  if (graph.limits === undefined || !keepsLimits(store)) return undefined;
  const limit = await store.runLimit(runId);
  return limit?.state === 'queued' ? limit : undefined;
}

/**
 * Waits, on the clock, until a run created queued in this process holds a slot: another run of
 * its key stopped and handed it on (in the store, in order). Ends early when `signal` aborts:
 * the caller's drive then cancels the run.
 *
 * @example
 * await untilAdmitted(store, graph, runId, clock, options.signal);
 */
export async function untilAdmitted(
  store: Store,
  graph: CompiledGraph,
  runId: string,
  clock: Clock,
  signal?: AbortSignal,
): Promise<void> {
  while (signal?.aborted !== true && (await queuedFor(store, graph, runId)) !== undefined)
    await clock.sleep(queuedPollMs, signal);
}

/**
 * The refusal of a resume of a run still queued for a slot: it starts once one frees, by
 * whoever hosts it (a worker, or the process that created it).
 *
 * @example
 * throw runQueued(limit);
 */
export function runQueued(limit: RunLimitRecord): WaymarkError {
  return new WaymarkError(
    'RUN_QUEUED',
    `run "${limit.runId}" is queued: graph "${limit.graph}" runs at most ${limit.concurrency} at once for key "${limit.key}", and that many are running; it starts when one of them stops running`,
    {
      retryable: true,
      details: {
        runId: limit.runId,
        graph: limit.graph,
        key: limit.key,
        concurrency: limit.concurrency,
      },
    },
  );
}
