// A run keeps the trace context of the segment that last drove it in its stored snapshots: the
// snapshot's JSON starts with `{"traceparent":"00-…"` when a traced segment wrote it. Every store
// holds snapshots as opaque JSON, so this needs no column and no migration, and every segment
// ends with a snapshot (a run that stops writes one), which is what the next segment loads.

const prefix = '{"traceparent":"';
// W3C trace context, version 00: 2 + 1 + 32 + 1 + 16 + 1 + 2 characters.
const traceparentPattern = /^00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/;

/**
 * The W3C `traceparent` a stored snapshot was written under, if a traced segment wrote it:
 * read from the text's first characters, without parsing the rest.
 *
 * @example
 * const previous = storedTraceparent(loaded.snapshot.data); // '00-4bf9…-00f0…-01' or undefined
 */
export function storedTraceparent(snapshot: string): string | undefined {
  if (!snapshot.startsWith(prefix)) return undefined;
  const value = snapshot.slice(prefix.length, prefix.length + 55);
  return traceparentPattern.test(value) ? value : undefined;
}

/** Whether a text is a W3C `traceparent` (version 00) this runtime stores. */
export function isTraceparent(value: string | undefined): value is string {
  return value !== undefined && traceparentPattern.test(value);
}
