import type { CompiledGraph } from '../../graph/compiled.js';
import { isStale } from './activations.js';
import { mergeFields } from './apply-update.js';
import { deepFreeze } from './freeze.js';
import { moveDraft, patchAsNode } from './move.js';
import { resumeDraft } from './resume-draft.js';
import { aboutSleep, sleptStep } from './sleeping.js';
import type { RunEvent, Snapshot, StepResult } from './snapshot.js';
import { Transition } from './transition.js';

type State = Snapshot['state'];

/**
 * The runtime's core: `(graph, snapshot, event) -> (snapshot, commands)`. It performs no I/O,
 * reads no clock and never runs a node body; the user code it calls (routers, reducers,
 * prompts, scores, retry predicates) is pure by contract and goes through one funnel that turns
 * a throw into an error value. Events about activations that are no longer pending, or about
 * another attempt than the pending one (a late result after a timeout, a worker whose lease
 * expired), and anything after the run stopped, change nothing.
 */
export function step(graph: CompiledGraph, snapshot: Snapshot, event: RunEvent): StepResult {
  if (event.type === 'migrated') {
    const state = deepFreeze(structuredClone(event.state)) as State;
    const stamp = { ...snapshot.graph, stateVersion: event.to };
    return { snapshot: { ...snapshot, graph: stamp, state }, commands: [] };
  }
  if (event.type === 'patched') {
    // Only a run that nothing drives now, and whose state no open fan-out holds a view of (a
    // branch sees the state at its fan-out): patch() refuses the others before recording.
    if (!isPatchable(snapshot)) return { snapshot, commands: [] };
    if (event.asNode !== undefined) {
      const t = new Transition(graph, snapshot);
      const asNode = event.asNode;
      return patchAsNode(t, { ...event, asNode }) ? t.result() : { snapshot, commands: [] };
    }
    const merged = mergeFields(graph, snapshot.state, deepFreeze(structuredClone(event.update)));
    if (!merged.ok) return { snapshot, commands: [] };
    return { snapshot: { ...snapshot, state: merged.state }, commands: [] };
  }
  if (event.type === 'moved') {
    // resume() refuses a finished run and one with a fan-out open (its branches hold the run).
    if (!isMovable(snapshot)) return { snapshot, commands: [] };
    const t = new Transition(graph, snapshot);
    moveDraft(t, event);
    return t.result();
  }
  if (event.type === 'resumed') {
    // Nothing to continue (finished, or stopped with nothing pending): resume() refuses these.
    if (snapshot.status === 'succeeded' || snapshot.pending.length === 0)
      return { snapshot, commands: [] };
    const t = new Transition(graph, snapshot);
    resumeDraft(t, event);
    return t.result();
  }
  // A waiting run takes only what resolves a wait: an answer, or the wait's timeout error; a
  // sleep's time and its wake; and its deadline.
  const waitingForThis =
    snapshot.status === 'waiting' &&
    (event.type === 'answered' ||
      event.type === 'failed' ||
      event.type === 'deadline' ||
      aboutSleep(snapshot, event));
  // A stopped run that could still be resumed may be cancelled for good (`cancel()` on a store).
  const cancellingStopped =
    event.type === 'cancelled' &&
    snapshot.status !== 'succeeded' &&
    snapshot.status !== 'cancelled';
  if (snapshot.status !== 'running' && !waitingForThis && !cancellingStopped)
    return { snapshot, commands: [] };
  if (isStale(snapshot, event)) return { snapshot, commands: [] };
  if (event.type === 'slept') return sleptStep(snapshot, event);
  const t = new Transition(graph, snapshot);
  switch (event.type) {
    case 'started':
      t.enqueue(graph.entry, null);
      break;
    case 'completed':
      t.complete(event);
      break;
    case 'answered':
      t.answer(event);
      break;
    case 'failed':
      t.fail(event.activation, event.error, event.attempt, event.at, event);
      break;
    case 'cancelled':
      t.stop('cancelled', 'RUN_CANCELLED', 'permanent', `the run was cancelled: ${event.reason}`);
      break;
    case 'deadline': {
      const limit = snapshot.limits.timeoutMs ?? event.timeoutMs;
      const message =
        limit === undefined
          ? 'the run passed its deadline'
          : `the run passed its time limit of ${limit} ms`;
      t.stop('timed_out', 'RUN_TIMEOUT', 'timeout', message);
      break;
    }
    default: {
      const never: never = event as never;
      throw new Error(`unknown run event ${JSON.stringify(never)}`);
    }
  }
  return t.result();
}

/**
 * Whether an operator may patch the run's state now: it waits for a person, or stopped in a way
 * a resume continues (failed, timed out), and no fan-out is open.
 *
 * @example
 * if (!isPatchable(snapshot)) throw refusal;
 */
export function isPatchable(snapshot: Snapshot): boolean {
  const stopped =
    snapshot.status === 'waiting' ||
    snapshot.status === 'failed' ||
    snapshot.status === 'timed_out';
  return stopped && Object.keys(snapshot.fanOuts).length === 0;
}

/**
 * Whether an operator may move the run to another node now: it has not finished, and no
 * fan-out is open (a branch's activations belong to it, and its join waits for them).
 *
 * @example
 * if (!isMovable(snapshot)) throw refusal;
 */
export function isMovable(snapshot: Snapshot): boolean {
  const open = snapshot.status !== 'succeeded' && snapshot.status !== 'cancelled';
  return open && Object.keys(snapshot.fanOuts).length === 0;
}
