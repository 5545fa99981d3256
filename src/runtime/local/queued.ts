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
 * its key stopped and handed it on (in the store, in order). Ends early when `signal` aborts
 * (the caller's drive then cancels the run); false when `drain` aborts first: the run is left
 * queued, for a worker or a resume once it holds a slot.
 *
 * @example
 * if (!(await untilAdmitted(store, graph, runId, clock, signal, drain))) throw drainedWhileQueued(runId);
 */
export async function untilAdmitted(
  store: Store,
  graph: CompiledGraph,
  runId: string,
  clock: Clock,
  signal?: AbortSignal,
  drain?: AbortSignal,
): Promise<boolean> {
  const stops = [signal, drain].filter((s): s is AbortSignal => s !== undefined);
  const stop = stops.length === 0 ? undefined : AbortSignal.any(stops);
  for (;;) {
    if (signal?.aborted === true) return true;
    if (drain?.aborted === true) return false;
    if ((await queuedFor(store, graph, runId)) === undefined) return true;
    await clock.sleep(queuedPollMs, stop);
  }
}

/**
 * What `run()` rejects with when drained while its run was still queued: nothing started.
 *
 * @example
 * throw drainedWhileQueued('r7');
 */
export function drainedWhileQueued(runId: string): WaymarkError {
  return new WaymarkError(
    'RUN_DRAINED',
    `run "${runId}" was given back while queued behind its graph's concurrency limit: nothing ran; once it is handed a slot a worker starts it, or a resume does`,
    { retryable: true, details: { runId } },
  );
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
