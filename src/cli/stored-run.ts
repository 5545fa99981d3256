import { storedJson } from '../error/store-corrupt.js';
import { loadStored } from '../runtime/codec/load-stored.js';
import { checkpointShape } from '../runtime/codec/snapshot-shape.js';
import type { Snapshot } from '../runtime/core/snapshot.js';
import type { LoadedRun, Store } from '../store/store.js';

/** A stored run as the command reads it without its graph file. */
export interface StoredRun {
  readonly loaded: LoadedRun;
  /**
   * The run's checkpoint when its latest snapshot is current: a run that stopped (waiting,
   * failed, succeeded, cancelled) wrote a full snapshot as its last commit. Undefined when events
   * after the snapshot must be replayed through the graph's routers and reducers (a run whose
   * process died mid-flight): then only `inspect()` with the graph can say.
   */
  readonly snapshot: Snapshot | undefined;
  /** The run's latest checkpoint, current or not: what a reader without the graph can show. */
  readonly checkpoint: Snapshot;
}

/**
 * Reads a run without loading its graph file (and so without tsx, zod or the runtime): what
 * `show` and the next-command hints need for a run that stopped.
 * @throws WaymarkError `RUN_NOT_FOUND`, `STORE_CORRUPT`, `STORE_VERSION_UNSUPPORTED`.
 *
 * @example
 * const { snapshot } = await readStoredRun(store, runId);
 */
export async function readStoredRun(store: Store, runId: string): Promise<StoredRun> {
  const loaded = await loadStored(store, runId);
  const checkpoint = parseSnapshot(loaded.snapshot.data, runId);
  return { loaded, snapshot: loaded.events.length > 0 ? undefined : checkpoint, checkpoint };
}

// A checkpoint without the graph, which the codec needs only to rebuild the state of open fan-out
// branches, which nothing here prints.
function parseSnapshot(text: string, runId: string): Snapshot {
  return checkpointShape(storedJson(text, runId, 'its snapshot'), runId) as unknown as Snapshot;
}
