import { WaymarkError } from '../../error/waymark-error.js';
import type { ItemScalar, ItemSearch, NewItem } from '../store.js';

// What every store's memory items share: the checks of an address (namespace and key), and the
// namespace's encoding as one text column: each part followed by U+0001, which no part holds.
// U+0001 sorts below every character a part may hold, so the byte order of the text is the
// order of the parts, one by one (['a'] < ['a', 'b'] < ['ab']), and the namespaces under a
// prefix are one range of an index, in every store.

const end = '\u0001';

/** The namespace as stored. */
export function encodeNamespace(namespace: readonly string[]): string {
  return namespace.map((part) => part + end).join('');
}

/** A stored namespace read back. */
export function decodeNamespace(text: string): string[] {
  return text.split(end).slice(0, -1);
}

/**
 * The stored namespaces under `prefix` (itself included): those in the range [`from`, `to`) of
 * byte order; `to` null, for `[]`: no end.
 */
export function prefixRange(prefix: readonly string[]): { from: string; to: string | null } {
  if (prefix.length === 0) return { from: '', to: null };
  const from = encodeNamespace(prefix);
  // The first text after every one that starts with `from`.
  return { from, to: `${from.slice(0, -1)}\u0002` };
}

function invalid(message: string, details: Record<string, unknown>): WaymarkError {
  return new WaymarkError('MEMORY_INVALID', message, { retryable: false, details });
}

const loneSurrogate = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** A part or key every store keeps as given: PostgreSQL's text holds no U+0000, nor lone surrogates. */
function checkText(what: string, text: unknown): void {
  if (typeof text !== 'string' || text === '')
    throw invalid(`a memory ${what} must be a non-empty string`, { [what]: text ?? null });
  if (text.includes('\u0000') || loneSurrogate.test(text))
    throw invalid(`a memory ${what} must not hold U+0000 or a lone surrogate`, { [what]: text });
}

/** Refuses a namespace that is not a non-empty list of valid parts (`[]` too, unless a prefix). */
export function checkNamespace(namespace: readonly string[], prefix = false): void {
  if (!Array.isArray(namespace) || (!prefix && namespace.length === 0))
    throw invalid('a memory namespace must be a non-empty list of strings', {
      namespace: Array.isArray(namespace) ? namespace : null,
    });
  for (const part of namespace) {
    checkText('namespace part', part);
    // LangGraph's rule too: a namespace is written `a.b.c` where one string names it (a URL).
    if (part.includes('.'))
      throw invalid('a memory namespace part must not hold a period (.)', { part });
    if ([...part].some((c) => c < ' '))
      throw invalid('a memory namespace part must not hold a control character', { part });
  }
}

/** Refuses an address (namespace and key) no store can keep. */
export function checkAddress(namespace: readonly string[], key: string): void {
  checkNamespace(namespace);
  checkText('key', key);
}

/** Refuses an item no store can keep. */
export function checkItem(item: NewItem): void {
  checkAddress(item.namespace, item.key);
  const ttl = item.ttlMs ?? null;
  if (ttl !== null && !(typeof ttl === 'number' && Number.isFinite(ttl) && ttl > 0))
    throw invalid('a memory ttlMs must be a number > 0', { ttlMs: ttl });
}

/** Refuses a search whose prefix, filter, limit or offset no store can read. */
export function checkSearch(search: ItemSearch): void {
  checkNamespace(search.prefix, true);
  for (const [field, value] of Object.entries(search.filter ?? {})) {
    const scalar =
      value === null ||
      typeof value === 'string' ||
      typeof value === 'boolean' ||
      (typeof value === 'number' && Number.isFinite(value));
    if (!scalar)
      throw invalid(`a memory filter compares with a string, a finite number, a boolean or null`, {
        field,
      });
  }
  for (const [name, n] of [
    ['limit', search.limit],
    ['offset', search.offset],
  ] as const) {
    if (n !== undefined && !(Number.isSafeInteger(n) && n >= 0))
      throw invalid(`a memory search's ${name} must be a whole number >= 0`, { [name]: n });
  }
}

/** Whether a stored value (JSON) matches a filter: an object whose fields equal the scalars. */
export function matchesFilter(
  value: string,
  filter: Readonly<Record<string, ItemScalar>> | undefined,
): boolean {
  const fields = Object.entries(filter ?? {});
  if (fields.length === 0) return true;
  const parsed = JSON.parse(value) as unknown;
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return false;
  const object = parsed as Record<string, unknown>;
  return fields.every(
    ([field, wanted]) => Object.hasOwn(object, field) && object[field] === wanted,
  );
}

/** Byte order of the UTF-8 of two texts: the order SQLite and PostgreSQL ("C") sort them in. */
export function byteOrder(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a), Buffer.from(b));
}
