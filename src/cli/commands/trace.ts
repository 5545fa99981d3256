import type { ErrorValue } from '../../error/error-value.js';
import { WaymarkError } from '../../error/waymark-error.js';
import { decodeEvent, decodeTrace } from '../../runtime/codec.js';
import { type TraceEntry, traceOf } from '../../runtime/trace.js';
import { exitCode } from '../exit-code.js';
import type { Io } from '../io.js';
import { describeEntry } from '../progress.js';
import type { CliStore } from '../session.js';
import { whereIs, withRunStore } from '../session.js';
import { iso } from '../time.js';
import { provenanceLines } from './show.js';

/** `waymark trace <run-id>`: every attempt, read from the history alone. */
export async function trace(out: Io, runId: string): Promise<number> {
  const { path, entries } = await withRunStore(out, runId, (store) => history(store, runId));
  out.json({
    type: 'trace',
    runId,
    path,
    entries: entries.map(({ entry, error }) => ({
      ...entry,
      startedAt: iso(entry.startedAt),
      ...(error !== undefined && { error }),
    })),
  });
  out.line(`path: ${path.join(' -> ')}`);
  out.line();
  for (const { entry, error } of entries) {
    out.line(`${iso(entry.startedAt)}  ${describeEntry(out, entry)}`);
    for (const turn of entry.turns ?? []) {
      const tools = turn.toolCalls?.length ? `, tools: ${turn.toolCalls.join(', ')}` : '';
      const usage = turn.usage
        ? `, ${turn.usage.inputTokens} in / ${turn.usage.outputTokens} out tokens`
        : '';
      out.line(`${' '.repeat(26)}  turn ${turn.turn}: ${turn.durationMs} ms${usage}${tools}`);
    }
    if (error === undefined) continue;
    for (const line of provenanceLines(error, out.flags.verbose)) {
      out.line(`${' '.repeat(28)}${line}`);
    }
  }
  const failed = entries.filter((e) => e.entry.status === 'failed').length;
  const used = entries.flatMap((e) => (e.entry.usage === undefined ? [] : [e.entry.usage]));
  const tokensIn = used.reduce((n, u) => n + u.inputTokens, 0);
  const tokensOut = used.reduce((n, u) => n + u.outputTokens, 0);
  out.line();
  out.line(
    `${path.length} activation(s), ${entries.length} attempt(s), ${failed} failed${used.length > 0 ? `, ${tokensIn} in / ${tokensOut} out model tokens` : ''}`,
  );
  return exitCode.succeeded;
}

/** A trace entry, with the whole error value of a failed attempt (its stack and cause). */
interface TracedAttempt {
  readonly entry: TraceEntry;
  readonly error: (TraceEntry['error'] & Pick<ErrorValue, 'stack' | 'cause'>) | undefined;
}

/**
 * The run's whole history, read once: its trace entries, each failed one with the error value
 * its `failed` event recorded (the trace keeps only code, class and message).
 */
async function history(
  store: CliStore,
  runId: string,
): Promise<{ path: readonly string[]; entries: TracedAttempt[] }> {
  if ((await store.getRun(runId)) === undefined) {
    throw new WaymarkError('RUN_NOT_FOUND', `there is no run "${runId}" in ${whereIs(store)}`, {
      retryable: false,
    });
  }
  const events = await store.events(runId);
  const errors = new Map<string, ErrorValue>();
  for (const stored of events) {
    const event = decodeEvent(stored.event, runId, stored.seq);
    if (event.type === 'failed') {
      errors.set(`${event.error.activation}#${event.error.attempt}`, event.error);
    }
  }
  const trace = traceOf(events.flatMap((e) => decodeTrace(e.trace, runId, e.seq)));
  return {
    path: trace.path,
    entries: trace.entries.map((entry) => {
      if (entry.error === undefined) return { entry, error: undefined };
      const value = errors.get(`${entry.activation}#${entry.attempt}`);
      const provenance = {
        ...(value?.stack !== undefined && { stack: value.stack }),
        ...(value?.cause !== undefined && { cause: value.cause }),
      };
      return { entry, error: { ...entry.error, ...provenance } };
    }),
  };
}
