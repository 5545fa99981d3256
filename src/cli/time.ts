/**
 * A point in time as every JSON line of the command writes it, and every human line too:
 * ISO 8601 in UTC, to the millisecond. Durations stay numbers of milliseconds, in fields whose
 * names end in `Ms`.
 *
 * @example
 * iso(0); // '1970-01-01T00:00:00.000Z'
 */
export function iso(epochMs: number): string {
  return new Date(epochMs).toISOString();
}
