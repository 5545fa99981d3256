import { storeCorrupt } from '../../error/store-corrupt.js';
import { WaymarkError } from '../../error/waymark-error.js';
import type { LoadedRun, Store } from '../../store/store.js';

/**
 * A stored run as `loadRun` gives it, or the reason there is none: RUN_NOT_FOUND when the store
 * has no such run, STORE_CORRUPT when it has the run's row but no snapshot to start from (a lost
 * row, or a store with a bug). Only the missing case pays the second read.
 * @throws WaymarkError `RUN_NOT_FOUND`, `STORE_CORRUPT`, `STORE_*` from the store.
 *
 * @example
 * const loaded = await loadStored(store, runId);
 */
export async function loadStored(store: Store, runId: string): Promise<LoadedRun> {
  const loaded = await store.loadRun(runId);
  if (loaded !== undefined) return loaded;
  throw await missing(store, runId);
}

/** Why a run a store could not load is missing, for callers that read it their own way. */
export async function missing(store: Store, runId: string): Promise<WaymarkError> {
  if ((await store.getRun(runId)) !== undefined)
    return storeCorrupt(runId, 'it has no snapshot to start from', { missing: 'snapshot' });
  return new WaymarkError('RUN_NOT_FOUND', `there is no run "${runId}"`, { retryable: false });
}
