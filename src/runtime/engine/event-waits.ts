import type { CompiledGraph } from '../../graph/compiled.js';
import type { EventWait } from '../../store/signal-store.js';
import { answerUpdate } from '../core/answer-update.js';
import type { Activation, RunEvent, Snapshot } from '../core/snapshot.js';

/**
 * The open event wait of an activation, as the store's signals match it.
 *
 * @example
 * const wait = eventWait('orders', 'r1', activation, 'payment');
 */
export function eventWait(
  graph: string,
  runId: string,
  activation: Activation,
  name: string,
): EventWait {
  return {
    runId,
    requestId: activation.waiting!.requestId,
    graph,
    name,
    key: activation.waiting!.key ?? null,
  };
}

/**
 * The event a signal delivered to an activation's wait steps: its answer, with the update
 * computed once here and recorded with it, or the node's failure if the update cannot apply.
 *
 * @example
 * inbox.push(answeredBySignal(graph, snapshot, activation, signal.payload, clock.now()));
 */
export function answeredBySignal(
  graph: CompiledGraph,
  snapshot: Snapshot,
  activation: Activation,
  payload: string,
  now: number,
): RunEvent {
  const answer = JSON.parse(payload) as unknown;
  const made = answerUpdate(graph, activation, answer, snapshot.state, snapshot.fanOuts);
  return made.ok
    ? { type: 'answered', activation: activation.id, answer, update: made.fields }
    : { type: 'failed', activation: activation.id, error: made.error, at: now };
}
