import { WaymarkError } from '../error/waymark-error.js';
import type { CompiledGraph } from '../graph/compiled.js';
import type { Store } from '../store/store.js';
import { type Clock, systemClock } from './clock.js';
import type { Snapshot } from './core/snapshot.js';
import { step } from './core/step.js';
import { currentSnapshot } from './current.js';
import { Journal } from './journal.js';

/** Options of {@link cancel}. */
export interface CancelOptions {
  /** Why: recorded in the run's error message. */
  readonly reason?: string;
  readonly clock?: Clock;
}

/**
 * Cancels a stored run for good: one commit moves it to `cancelled`, after which `resume`
 * refuses it. Works on a run that waits for a person, failed or timed out, or is `running`;
 * a process still executing that run loses the race at its next commit (STORE_CONFLICT) and
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
  const loaded = await store.loadRun(runId);
  if (loaded === undefined) {
    throw new WaymarkError('RUN_NOT_FOUND', `there is no run "${runId}"`, { retryable: false });
  }
  const before = currentSnapshot(g, loaded);
  if (before.status === 'succeeded' || before.status === 'cancelled') {
    throw new WaymarkError(
      'RUN_NOT_CANCELLABLE',
      `run "${runId}" has ${before.status === 'succeeded' ? 'succeeded' : 'been cancelled already'}; there is nothing to cancel`,
      { retryable: false },
    );
  }
  const event = { type: 'cancelled', reason: options.reason ?? 'cancelled from outside' } as const;
  const after = step(g, before, event).snapshot;
  const journal = new Journal(store, runId, loaded.run.seq, options.clock ?? systemClock);
  await journal.record(event, after, []);
  return after;
}
