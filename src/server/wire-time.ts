import type { StreamEvent } from '../runtime/watch/stream.js';
import type { TraceEntry } from '../runtime/watch/trace.js';
import { badRequest } from './http-errors.js';

// Points in time on the wire. Every JSON text waymark writes (the CLI's --json lines, the API's
// bodies, its SSE data) gives a point in time as an ISO 8601 string in UTC, to the millisecond;
// durations stay numbers of milliseconds, in fields whose names end in `Ms`. The TypeScript
// values (the library, `waymark/client`) give points in time as milliseconds since the epoch.

/**
 * A point in time as the API writes it.
 *
 * @example
 * isoTime(0); // '1970-01-01T00:00:00.000Z'
 */
export function isoTime(ms: number): string {
  // Formatting costs 1-3 us, more than the rest of an event's JSON: the events of one commit
  // share their time, and the clients of one run read the same commits, so a few hundred
  // recent times are kept.
  let iso = recent.get(ms);
  if (iso === undefined) {
    if (recent.size >= 512) recent.clear();
    iso = new Date(ms).toISOString();
    recent.set(ms, iso);
  }
  return iso;
}

const recent = new Map<number, string>();

/**
 * A stream event as the API sends it: `at`, and `notBefore` and `emittedAt` where it has them.
 *
 * @example
 * await sse.writeSSE({ id: event.offset, event: event.type, data: JSON.stringify(wireEvent(event)) });
 */
export function wireEvent(event: StreamEvent): Record<string, unknown> {
  const out: Record<string, unknown> = { ...event, at: isoTime(event.at) };
  if (event.type === 'activation.scheduled' && event.notBefore !== undefined)
    out.notBefore = isoTime(event.notBefore);
  if (event.type === 'custom') out.emittedAt = isoTime(event.emittedAt);
  return out;
}

/**
 * A trace entry as the API sends it: its `startedAt`; `durationMs` stays a number.
 *
 * @example
 * c.json({ entries: trace.entries.map(wireEntry), path: trace.path });
 */
export function wireEntry(entry: TraceEntry): Record<string, unknown> {
  const { heartbeat } = entry;
  return {
    ...entry,
    startedAt: isoTime(entry.startedAt),
    ...(heartbeat !== undefined && { heartbeat: { ...heartbeat, at: isoTime(heartbeat.at) } }),
  };
}

/**
 * A point in time a query gives: milliseconds since the epoch, or an ISO 8601 date or time.
 * @throws WaymarkError `USAGE_INVALID` for anything else.
 *
 * @example
 * timeOfQuery('since', '2026-12-03T08:00:00Z'); // 1796284800000
 */
export function timeOfQuery(name: string, value: string): number {
  if (/^\d+$/.test(value)) return Number(value);
  const ms = /^\d{4}-\d{2}-\d{2}/.test(value) ? Date.parse(value) : Number.NaN;
  if (Number.isNaN(ms))
    throw badRequest(
      `${name} must be a time: ms since the epoch or ISO 8601 (2026-12-03T08:00:00Z), not "${value}"`,
    );
  return ms;
}
