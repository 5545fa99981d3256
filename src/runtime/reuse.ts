import { WaymarkError } from '../error/waymark-error.js';
import type { Store } from '../store/store.js';
import { decodeEvent } from './codec.js';

/**
 * The outputs an earlier run recorded, by input hash (`node@version#digest`): every completed
 * activation whose completion carried a hash. A later run reads an activation's output back from
 * here instead of running it when its node, version and inputs are the same. Reads the earlier
 * run's whole history, once, when the new run starts.
 */
export async function reuseIndex(store: Store, runId: string): Promise<Map<string, unknown>> {
  if ((await store.getRun(runId)) === undefined) {
    throw new WaymarkError('RUN_NOT_FOUND', `there is no run "${runId}" to reuse outputs from`, {
      retryable: false,
    });
  }
  const outputs = new Map<string, unknown>();
  for (const stored of await store.events(runId)) {
    const event = decodeEvent(stored.event, runId, stored.seq);
    if (event.type === 'completed' && event.inputHash !== undefined)
      outputs.set(event.inputHash, event.update ?? null); // null: it returned nothing
  }
  return outputs;
}
