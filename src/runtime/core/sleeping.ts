import { type ErrorValue, errorValue } from '../../error/error-value.js';
import type { RuntimeNode } from '../../graph/compiled.js';
import type { Untracked } from '../../graph/untracked.js';
import { askWait, nodeState } from './answer-update.js';
import { callUser, userError } from './call-user.js';
import type { Activation, Command, FanOut, RunEvent, Snapshot, StepResult } from './snapshot.js';

type State = Snapshot['state'];
type Admitted =
  | { readonly ok: true; readonly activation: Activation }
  | { readonly ok: false; readonly error: ErrorValue };

/**
 * A node that stops the run instead of running a body, as it is reached: a person's wait with
 * its question asked, or a sleep with its time (an `until` from the state, computed here, once;
 * a `for` only knows its length: the driver records the time). A prompt or an `until` that
 * throws is an error value.
 *
 * @example
 * const admitted = admitStop(node, activation, runId, state, fanOuts);
 */
export function admitStop(
  node: RuntimeNode,
  activation: Activation,
  runId: string,
  state: State,
  fanOuts: Readonly<Record<string, FanOut>>,
  untracked?: Untracked,
): Admitted {
  if (node.wait !== undefined) return askWait(node, activation, runId, state, fanOuts, untracked);
  const spec = node.sleep!;
  if (spec.until === undefined)
    return { ok: true, activation: { ...activation, sleeping: { forMs: spec.forMs ?? 0 } } };
  // Taken again on replay, like a router: untracked fields at their defaults.
  const view = nodeState(node, activation, state, fanOuts, untracked);
  const where = { node: node.def.name, activation: activation.id, attempt: 0 };
  const called = callUser(() => spec.until!(view));
  if (!called.ok) {
    const what = `the until() of sleep "${node.def.name}" threw`;
    return { ok: false, error: userError(where, 'NODE_FAILED', what, called.thrown) };
  }
  const value = called.value as unknown;
  const until = value instanceof Date ? value.getTime() : value;
  if (typeof until !== 'number' || !Number.isFinite(until)) {
    const message = `the until() of sleep "${node.def.name}" returned ${String(value)}, not a Date or ms since the epoch`;
    return { ok: false, error: errorValue(where, 'NODE_FAILED', 'permanent', message) };
  }
  return { ok: true, activation: { ...activation, sleeping: { until } } };
}

/**
 * What makes a pending activation go: run its body, open its wait, or set its sleep's timer.
 *
 * @example
 * commands.push(startCommand(activation));
 */
export function startCommand(activation: Activation): Command {
  if (activation.waiting !== undefined) return { type: 'wait', activation };
  if (activation.sleeping !== undefined) return { type: 'sleep', activation };
  return { type: 'execute', activation };
}

/**
 * A `for` sleep learns its time (a `slept` event): the activation keeps sleeping, until then.
 * Nothing else changes, so no transition is needed.
 *
 * @example
 * const result = sleptStep(snapshot, { type: 'slept', activation: 'pause:1', until: 5_000 });
 */
export function sleptStep(
  snapshot: Snapshot,
  event: Extract<RunEvent, { type: 'slept' }>,
): StepResult {
  const index = snapshot.pending.findIndex((a) => a.id === event.activation);
  const asleep = snapshot.pending[index]!;
  const activation: Activation = {
    ...asleep,
    sleeping: { ...asleep.sleeping, until: event.until },
  };
  const pending = snapshot.pending.slice();
  pending[index] = activation;
  return { snapshot: { ...snapshot, pending }, commands: [{ type: 'sleep', activation }] };
}

/**
 * The sleeps among activations that are over: woken (a sleep's wake is its completion, with no
 * update: `wakeOf`), or gone without waking (a join's losers, a moved or cancelled run's):
 * their timers go.
 *
 * @example
 * const ended = endedSleeps(doomedActivations);
 */
export function endedSleeps(activations: readonly Activation[]): Command[] {
  const ids: string[] = [];
  for (const a of activations) if (a.sleeping !== undefined) ids.push(a.id);
  return ids.length === 0 ? [] : [{ type: 'endSleeps', activations: ids }];
}

/**
 * A woken activation of a node whose `notBefore` it slept for, or that its rate limit deferred:
 * the same activation, awake, to run its body; undefined for a sleep node's, which completes.
 *
 * @example
 * const awake = awakeToRun(node, activation); // { id: 'send:1', ... } without `sleeping`
 */
export function awakeToRun(node: RuntimeNode, activation: Activation): Activation | undefined {
  if (node.sleep?.thenRun !== true && activation.sleeping?.rate === undefined) return undefined;
  const { sleeping: _slept, ...awake } = activation;
  return awake;
}

/**
 * Whether the event is about a sleeping activation of the run: its time, or its wake.
 *
 * @example
 * if (snapshot.status === 'waiting' && aboutSleep(snapshot, event)) ...
 */
export function aboutSleep(snapshot: Snapshot, event: RunEvent): boolean {
  if (event.type !== 'completed' && event.type !== 'slept') return false;
  return snapshot.pending.some((a) => a.id === event.activation && a.sleeping !== undefined);
}

/**
 * When the run's first sleep is due (ms since the epoch), if it sleeps.
 *
 * @example
 * const at = nextWake(snapshot); // undefined: nothing of it sleeps
 */
export function nextWake(snapshot: Snapshot): number | undefined {
  let at: number | undefined;
  for (const a of snapshot.pending) {
    const until = a.sleeping?.until;
    if (until !== undefined && (at === undefined || until < at)) at = until;
  }
  return at;
}

/**
 * The activation a refused rate-limit admission puts to sleep: the same attempt (it never
 * started), until the window has room. Read from the recorded error alone, not from the node's
 * declaration: a replay under a graph whose rate limit was since removed (a quota is not in the
 * structural hash) decides as the recording did. Undefined for any other failure, or for a
 * refusal that does not say until when, which is an ordinary failure.
 *
 * @example
 * const deferred = rateDeferred(activation, error); // sleeping: { until, rate: 'openai' }
 */
export function rateDeferred(activation: Activation, error: ErrorValue): Activation | undefined {
  if (error.code !== 'RATE_LIMITED') return undefined;
  const details = error.details as { until?: unknown; resource?: unknown } | undefined;
  const until = details?.until;
  if (typeof until !== 'number' || !Number.isFinite(until)) return undefined;
  const rate = typeof details?.resource === 'string' ? details.resource : activation.node;
  const { notBefore: _n, ...rest } = activation;
  return { ...rest, sleeping: { until, rate } };
}
