import type { CompiledGraph } from '../../graph/compiled.js';
import type { RunLimits, Snapshot } from './snapshot.js';

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
