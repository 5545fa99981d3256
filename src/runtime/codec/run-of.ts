import { WaymarkError } from '../../error/waymark-error.js';
import type { CompiledGraph } from '../../graph/compiled.js';
import type { RunRecord, Store } from '../../store/store.js';

/**
 * A stored run's record, for reading it with its graph.
 * @throws WaymarkError `RUN_NOT_FOUND`; `GRAPH_MISMATCH` for a run of another graph.
 *
 * @example
 * const record = await runOf(store, graph, runId);
 */
export async function runOf(store: Store, graph: CompiledGraph, runId: string): Promise<RunRecord> {
  const record = await store.getRun(runId);
  if (record === undefined) {
    throw new WaymarkError('RUN_NOT_FOUND', `there is no run "${runId}"`, { retryable: false });
  }
  if (record.graph !== graph.name) {
    throw new WaymarkError(
      'GRAPH_MISMATCH',
      `run "${runId}" belongs to graph "${record.graph}", not "${graph.name}"`,
      { retryable: false },
    );
  }
  return record;
}
