/**
 * What an ordinary thrown error says about itself, kept as data in its error value's `details`:
 * the fields HTTP clients, fetch wrappers and the AI SDK's `APICallError` put on their errors,
 * so a retry predicate (and a person reading the failure) can decide on them after the throw is
 * gone. Every field is optional; an error that carries none of them gives no data at all.
 *
 * @example
 * // a node threw an APICallError for a 429 with `retry-after: 2`
 * error.details; // { name: 'AI_APICallError', status: 429, isRetryable: true, retryAfter: '2' }
 */
export interface ThrownData {
  /** The error's `name` when it is not the plain `'Error'` (`'AbortError'`, `'AI_APICallError'`). */
  readonly name?: string;
  /** The HTTP status: the error's `status`, else its `statusCode`, else its `response.status`. */
  readonly status?: number;
  /** The error's own `code` (`'ECONNRESET'`), else its `error.code` (`'insufficient_quota'`). */
  readonly code?: string;
  /** What the thrower said about trying again (the AI SDK's `APICallError.isRetryable`). */
  readonly isRetryable?: boolean;
  /** The response's `Retry-After` header as sent: seconds or an HTTP date. */
  readonly retryAfter?: string;
}

type Loose = Record<string, unknown> | undefined;

/**
 * The data of a thrown error (see {@link ThrownData}), or undefined when it carries none.
 *
 * @example
 * thrownData(Object.assign(new Error('Not Found'), { status: 404 })); // { status: 404 }
 */
export function thrownData(thrown: unknown): ThrownData | undefined {
  if (typeof thrown !== 'object' || thrown === null) return undefined;
  const e = thrown as Record<string, unknown>;
  const response = objectOr(e.response);
  const name = typeof e.name === 'string' && e.name !== 'Error' ? e.name : undefined;
  const status = statusOf(e.status) ?? statusOf(e.statusCode) ?? statusOf(response?.status);
  const code = stringOf(e.code) ?? stringOf(objectOr(e.error)?.code);
  const isRetryable = typeof e.isRetryable === 'boolean' ? e.isRetryable : undefined;
  const retryAfter =
    header(e.responseHeaders, 'retry-after') ??
    header(e.headers, 'retry-after') ??
    header(response?.headers, 'retry-after');
  if (
    name === undefined &&
    status === undefined &&
    code === undefined &&
    isRetryable === undefined &&
    retryAfter === undefined
  )
    return undefined;
  return {
    ...(name !== undefined && { name }),
    ...(status !== undefined && { status }),
    ...(code !== undefined && { code }),
    ...(isRetryable !== undefined && { isRetryable }),
    ...(retryAfter !== undefined && { retryAfter }),
  };
}

function objectOr(value: unknown): Loose {
  return typeof value === 'object' && value !== null
    ? (value as Record<string, unknown>)
    : undefined;
}

// A status may come as a string (`'503'` from some clients); anything outside 100-599 is not one.
function statusOf(value: unknown): number | undefined {
  const n = typeof value === 'string' && /^\d{3}$/.test(value) ? Number(value) : value;
  return typeof n === 'number' && Number.isInteger(n) && n >= 100 && n <= 599 ? n : undefined;
}

function stringOf(value: unknown): string | undefined {
  if (typeof value === 'string' && value !== '') return value;
  return typeof value === 'number' && Number.isFinite(value) ? String(value) : undefined;
}

// Headers come as a plain record (the AI SDK), a fetch `Headers` or anything with `get`.
function header(headers: unknown, name: string): string | undefined {
  const h = objectOr(headers);
  if (h === undefined) return undefined;
  if (typeof h.get === 'function') {
    try {
      return stringOf((h.get as (n: string) => unknown).call(h, name));
    } catch {
      return undefined;
    }
  }
  for (const [key, value] of Object.entries(h)) {
    if (key.toLowerCase() === name) return stringOf(value);
  }
  return undefined;
}
