import { isSpanContextValid, type SpanContext, TraceFlags } from '@opentelemetry/api';

/**
 * A span context as a W3C `traceparent` (version 00), or undefined for an invalid one (the
 * no-op tracer's): what a run stores so its next segment can link to this one.
 *
 * @example
 * formatTraceparent(span.spanContext()); // '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01'
 */
export function formatTraceparent(context: SpanContext): string | undefined {
  if (!isSpanContextValid(context)) return undefined;
  const flags = (context.traceFlags & 0xff).toString(16).padStart(2, '0');
  return `00-${context.traceId}-${context.spanId}-${flags}`;
}

/** The span context a stored `traceparent` names, as a remote one; undefined if unreadable. */
export function parseTraceparent(text: string): SpanContext | undefined {
  const match = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/.exec(text);
  if (match === null) return undefined;
  const context: SpanContext = {
    traceId: match[1]!,
    spanId: match[2]!,
    traceFlags: Number.parseInt(match[3]!, 16) & TraceFlags.SAMPLED,
    isRemote: true,
  };
  return isSpanContextValid(context) ? context : undefined;
}
