import type { CompiledGraph } from '../../graph/compiled.js';
import type { Command, RunLimits, Snapshot, StepResult } from './snapshot.js';

// Where checkpoints begin and how a stopped one continues; the transitions in between are step.ts.

/**
 * A run that has not started: running, nothing scheduled yet. Feed it a `started` event.
 *
 * @example
 * let { snapshot, commands } = step(g, initialSnapshot('run-1', state, { maxSteps: 100 }), { type: 'started' });
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

/**
 * Continues a stopped or interrupted run: the pending activations run again (a wait is
 * recorded again, idempotently, and keeps waiting for its answer). A failed
 * activation starts a fresh retry budget (attempt 1); an interrupted one keeps its attempt,
 * since it never finished. The checkpoint is restamped with the graph it continues under.
 */
export function resumed(graph: CompiledGraph, snapshot: Snapshot): StepResult {
  // Nothing to continue (finished, or stopped with nothing pending): resume() refuses these.
  if (snapshot.status === 'succeeded' || snapshot.pending.length === 0)
    return { snapshot, commands: [] };
  const fresh = snapshot.status === 'failed';
  const pending = fresh ? snapshot.pending.map((a) => ({ ...a, attempt: 1 })) : snapshot.pending;
  const { runId, state, visits, steps, errors, fanOuts, limits, spent, quarantine } = snapshot;
  // Activations waiting for a person keep waiting: only an answer moves them.
  const waiting = pending.every((a) => a.waiting !== undefined);
  const next: Snapshot = {
    status: waiting ? 'waiting' : 'running',
    runId,
    graph: stampOf(graph),
    state,
    pending,
    visits,
    steps,
    errors,
    fanOuts,
    limits,
    spent,
    quarantine,
  };
  const commands = pending.map(
    (activation): Command =>
      activation.waiting === undefined
        ? { type: 'execute', activation, delayMs: 0 }
        : { type: 'wait', activation },
  );
  return { snapshot: next, commands };
}
