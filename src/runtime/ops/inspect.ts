import type { CompiledGraph } from '../../graph/compiled.js';
import type { RunRecord, Store, WaitRecord } from '../../store/store.js';
import { currentSnapshot } from '../codec/current.js';
import { loadStored } from '../codec/load-stored.js';
import type { Snapshot } from '../core/snapshot.js';
import type { Trace } from '../watch/trace.js';
import { loadTrace } from './history.js';

/** A stored run as it stands: what `waymark show` and `waymark graph --run` print. */
export interface RunView<S = Record<string, unknown>> {
  readonly run: RunRecord;
  /** The current checkpoint: status, state, pending activations, errors. */
  readonly snapshot: Snapshot & { readonly state: S };
  /** Every wait the run opened, answered or not, in the order they were opened. */
  readonly waits: readonly WaitRecord[];
  /** The whole trace, across every process that ran or resumed the run. */
  readonly trace: Trace;
}

/**
 * Reads a stored run without changing anything: its record, current checkpoint, waits and trace.
 * @throws WaymarkError `RUN_NOT_FOUND`, `GRAPH_MISMATCH`, `STATE_VERSION_UNKNOWN`,
 *   `STORE_CORRUPT`, `STORE_VERSION_UNSUPPORTED`.
 *
 * @example
 * const { snapshot, waits } = await inspect(store, graph, runId);
 */
export async function inspect<S, I>(
  store: Store,
  graph: CompiledGraph<S, I>,
  runId: string,
): Promise<RunView<S>> {
  const loaded = await loadStored(store, runId);
  const snapshot = currentSnapshot(graph as CompiledGraph, loaded);
  const [waits, trace] = await Promise.all([store.listWaits(runId), loadTrace(store, runId)]);
  return { run: loaded.run, snapshot: snapshot as RunView<S>['snapshot'], waits, trace };
}
