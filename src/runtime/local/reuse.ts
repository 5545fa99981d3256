import { WaymarkError } from '../../error/waymark-error.js';
import type { Store } from '../../store/store.js';
import { decodeEvent } from '../codec/codec.js';

/**
 * The outputs an earlier run recorded, by input hash (`node@version#digest`): every completed
 * activation whose completion carried a hash, and whether it was recorded as parsed. A later run reads an activation's output back from
 * here instead of running it when its node, version and inputs are the same. Reads the earlier
 * run's whole history, once, when the new run starts.
 */
export async function reuseIndex(
  store: Store,
  runId: string,
): Promise<Map<string, { readonly update: unknown; readonly parsed: boolean }>> {
  if ((await store.getRun(runId)) === undefined) {
    throw new WaymarkError('RUN_NOT_FOUND', `there is no run "${runId}" to reuse outputs from`, {
      retryable: false,
    });
  }
  const outputs = new Map<string, { readonly update: unknown; readonly parsed: boolean }>();
  for (const stored of await store.events(runId)) {
    const event = decodeEvent(stored.event, runId, stored.seq);
    // A completion stored before store format 3 holds the node's raw return: parsed on reuse.
    if (event.type === 'completed' && event.inputHash !== undefined)
      outputs.set(event.inputHash, { update: event.update, parsed: event.unparsed !== true });
  }
  return outputs;
}
