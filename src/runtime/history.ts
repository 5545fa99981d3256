import type { Store } from '../store/store.js';
import { decodeTrace } from './codec.js';
import { type Trace, traceOf } from './trace.js';

/**
 * The whole trace of a stored run, across every process that ran or resumed it: each attempt
 * in the order it was recorded, and the path it took. Reads the run's entire history.
 *
 * @example
 * const { path } = await loadTrace(store, runId); // ['fetch', 'select', 'draft', ...]
 */
export async function loadTrace(store: Store, runId: string): Promise<Trace> {
  const events = await store.events(runId);
  return traceOf(events.flatMap((e) => decodeTrace(e.trace, runId, e.seq)));
}
