import type { ErrorValue } from '../../error/error-value.js';
import type { Store } from '../../store/store.js';
import { decodeEvent, decodeTrace } from '../codec/codec.js';
import { type Trace, type TraceEntry, traceOf } from '../watch/trace.js';

/**
 * The whole trace of a stored run, across every process that ran or resumed it: each attempt
 * in the order it was recorded, and the path it took; a failed attempt's error carries the
 * stack and cause its `failed` event recorded. Reads the run's entire history.
 *
 * @example
 * const { path } = await loadTrace(store, runId); // ['fetch', 'select', 'draft', ...]
 */
export async function loadTrace(store: Store, runId: string): Promise<Trace> {
  const events = await store.events(runId);
  // The trace records keep a failure's code, class and message; its provenance lives once, in
  // the event, so a long stack is stored once.
  const failures = new Map<string, ErrorValue>();
  for (const stored of events) {
    if (!stored.event.includes('"failed"')) continue;
    const event = decodeEvent(stored.event, runId, stored.seq);
    if (event.type === 'failed') failures.set(attemptKey(event.error), event.error);
  }
  const trace = traceOf(events.flatMap((e) => decodeTrace(e.trace, runId, e.seq)));
  if (failures.size === 0) return trace;
  return { ...trace, entries: trace.entries.map((entry) => withProvenance(entry, failures)) };
}

function withProvenance(entry: TraceEntry, failures: ReadonlyMap<string, ErrorValue>): TraceEntry {
  if (entry.error === undefined) return entry;
  const value = failures.get(attemptKey(entry));
  if (value?.stack === undefined && value?.cause === undefined) return entry;
  return {
    ...entry,
    error: {
      ...entry.error,
      ...(value.stack !== undefined && { stack: value.stack }),
      ...(value.cause !== undefined && { cause: value.cause }),
    },
  };
}

function attemptKey(at: { readonly activation: string; readonly attempt: number }): string {
  return `${at.activation}#${at.attempt}`;
}
