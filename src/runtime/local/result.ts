import type { CompiledGraph } from '../../graph/compiled.js';
import { outputOf, publicState } from '../../graph/run-input.js';
import { nextWake } from '../core/sleeping.js';
import type { Snapshot } from '../core/snapshot.js';
import type { RunResult } from '../run-types.js';
import type { Trace } from '../watch/trace.js';

/**
 * The caller's view of a stopped snapshot.
 *
 * @example
 * const result = resultOf(snapshot, traceOf(entries), graph);
 */
export function resultOf(
  snapshot: Snapshot,
  trace: Trace,
  graph?: Pick<CompiledGraph, 'output' | 'def'>,
): RunResult {
  // A subgraph's private slot is the runtime's working space, not part of what the run hands back.
  const state = graph === undefined ? snapshot.state : publicState(graph, snapshot.state);
  const base = {
    runId: snapshot.runId,
    state,
    output: graph === undefined ? state : outputOf(graph, state),
    trace,
    errors: snapshot.errors,
    steps: snapshot.steps,
    spent: snapshot.spent,
    quarantine: snapshot.quarantine,
  };
  switch (snapshot.status) {
    case 'failed':
    case 'cancelled':
    case 'timed_out':
      return { ...base, status: snapshot.status, error: snapshot.error };
    case 'succeeded':
      return { ...base, status: snapshot.status };
    case 'waiting': {
      const wakesAt = nextWake(snapshot);
      return wakesAt === undefined
        ? { ...base, status: 'waiting' }
        : { ...base, status: 'waiting', wakesAt };
    }
    case 'running':
      throw new Error('waymark internal: a run was reported while still running');
  }
}
