import type { CompiledGraph } from '../graph/compiled.js';
import { outputOf } from '../graph/run-input.js';
import type { Snapshot } from './core/snapshot.js';
import type { RunResult } from './run-types.js';
import type { Trace } from './trace.js';

/**
 * The caller's view of a stopped snapshot.
 *
 * @example
 * const result = resultOf(snapshot, traceOf(entries), graph);
 */
export function resultOf(
  snapshot: Snapshot,
  trace: Trace,
  graph?: Pick<CompiledGraph, 'output'>,
): RunResult {
  const base = {
    runId: snapshot.runId,
    state: snapshot.state,
    output: graph === undefined ? snapshot.state : outputOf(graph, snapshot.state),
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
    case 'waiting':
      return { ...base, status: snapshot.status };
    case 'running':
      throw new Error('waymark internal: a run was reported while still running');
  }
}
