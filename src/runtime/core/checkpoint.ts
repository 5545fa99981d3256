import type { ErrorValue } from '../../error/error-value.js';
import type { CompiledGraph } from '../../graph/compiled.js';
import type { RunEvent, RunLimits, RunStatus, Snapshot } from './snapshot.js';

// Where checkpoints begin; the transitions from there, resuming included, are step.ts.

/**
 * A run that has not started: running, nothing scheduled yet. Feed it a `started` event.
 *
 * @example
 * let { snapshot, commands } = step(g, initialSnapshot(g, 'run-1', state, { maxSteps: 100 }), { type: 'started' });
 */
export function initialSnapshot(
  graph: CompiledGraph,
  runId: string,
  state: Readonly<Record<string, unknown>>,
  limits: RunLimits,
): Snapshot {
  return {
    status: 'running',
    runId,
    graph: stampOf(graph),
    state,
    pending: [],
    visits: {},
    steps: 0,
    errors: [],
    fanOuts: {},
    limits,
    spent: noSpend,
    quarantine: [],
  };
}

const noSpend = Object.freeze({ inputTokens: 0, outputTokens: 0, costUsd: 0 });

/** The checkpoint stamp of a graph: name, structural hash, version, state schema version. */
export function stampOf(graph: CompiledGraph): Snapshot['graph'] {
  return {
    name: graph.name,
    hash: graph.hash,
    version: graph.version,
    stateVersion: graph.stateVersion,
  };
}

/** Every field of a snapshot but its status and error. */
export type SnapshotParts = Omit<Extract<Snapshot, { status: 'running' }>, 'status'>;

/**
 * The snapshot of a status: the stopped ones carry the error that stopped them. Two literal
 * shapes instead of a spread: a transition builds one per step, and a spread cost ~1 us here.
 *
 * @example
 * const next = snapshotOf('failed', error, parts);
 */
export function snapshotOf(
  status: RunStatus,
  error: ErrorValue | undefined,
  p: SnapshotParts,
): Snapshot {
  if (status === 'failed' || status === 'cancelled' || status === 'timed_out') {
    return {
      status,
      runId: p.runId,
      graph: p.graph,
      state: p.state,
      pending: p.pending,
      visits: p.visits,
      steps: p.steps,
      errors: p.errors,
      fanOuts: p.fanOuts,
      limits: p.limits,
      spent: p.spent,
      quarantine: p.quarantine,
      error: error!,
    };
  }
  return {
    status,
    runId: p.runId,
    graph: p.graph,
    state: p.state,
    pending: p.pending,
    visits: p.visits,
    steps: p.steps,
    errors: p.errors,
    fanOuts: p.fanOuts,
    limits: p.limits,
    spent: p.spent,
    quarantine: p.quarantine,
  };
}

/**
 * The run limits a resume carries on with: its event's deadline (null clears it) and step limit
 * replace the checkpoint's; the rest stay.
 *
 * @example
 * resumedLimits(limits, { type: 'resumed', maxSteps: 500 }); // { ...limits, maxSteps: 500 }
 */
export function resumedLimits(
  limits: RunLimits,
  event: Extract<RunEvent, { type: 'resumed' }>,
): RunLimits {
  let next = limits;
  if (event.deadlineAt !== undefined) {
    const { deadlineAt: _d, timeoutMs: _t, ...rest } = next;
    next = {
      ...rest,
      ...(event.deadlineAt !== null && { deadlineAt: event.deadlineAt }),
      ...(event.timeoutMs !== undefined && { timeoutMs: event.timeoutMs }),
    };
  }
  if (event.maxSteps !== undefined) next = { ...next, maxSteps: event.maxSteps };
  return next;
}
