import { WaymarkError } from '../../error/waymark-error.js';
import type { CompiledGraph } from '../../graph/compiled.js';
import type { Store } from '../../store/store.js';
import { type Clock, systemClock } from '../clock.js';
import { currentSnapshot } from '../codec/current.js';
import { loadStored } from '../codec/load-stored.js';
import type { Snapshot } from '../core/snapshot.js';
import { step } from '../core/step.js';
import { commitExtras } from '../engine/commit-extras.js';
import { Journal } from '../engine/journal.js';

/** Options of {@link cancel}. */
export interface CancelOptions {
  /** Why: recorded in the run's error message. */
  readonly reason?: string;
  readonly clock?: Clock;
}

/**
 * Cancels a stored run for good: one commit moves it to `cancelled` and closes its open waits,
 * after which `resume` refuses it and `answer` refuses its waits. Works on a run that waits for
 * a person, failed or timed out, or is `running` in another process: that process needs no
 * lease to be asked to stop, it meets the cancellation at its next commit, folds it in and
 * stops, recording nothing more. To cancel a run in this process, abort its `signal` instead.
 * @throws WaymarkError `RUN_NOT_FOUND`, `RUN_NOT_CANCELLABLE` (it succeeded, or was cancelled
 *   already), `GRAPH_MISMATCH`, `STORE_CONFLICT` (another process committed first: try again).
 *
 * @example
 * const stopped = await cancel(store, graph, runId, { reason: 'the editor withdrew the post' });
 */
export async function cancel<S, I>(
  store: Store,
  graph: CompiledGraph<S, I>,
  runId: string,
  options: CancelOptions = {},
): Promise<Snapshot> {
  const g = graph as CompiledGraph;
  const loaded = await loadStored(store, runId);
  const before = currentSnapshot(g, loaded);
  if (before.status === 'succeeded' || before.status === 'cancelled') {
    throw new WaymarkError(
      'RUN_NOT_CANCELLABLE',
      `run "${runId}" has ${before.status === 'succeeded' ? 'succeeded' : 'been cancelled already'}; there is nothing to cancel`,
      { retryable: false },
    );
  }
  const event = { type: 'cancelled', reason: options.reason ?? 'cancelled from outside' } as const;
  const { snapshot: after, commands } = step(g, before, event);
  const clock = options.clock ?? systemClock;
  // Unfenced by a lease (any process may cancel a run), fenced by seq like every commit.
  const journal = new Journal(store, g, runId, loaded.run.seq, clock);
  // Tasks still queued for workers are cancelled with it (stores without a queue ignore this).
  const cancelled = after.pending.map((a) => a.id);
  await journal.record(event, after, [], {
    ...commitExtras(g, event, before, after, commands, clock.now()),
    ...(cancelled.length > 0 && { schedule: { cancel: cancelled } }),
  });
  return after;
}
