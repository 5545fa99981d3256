import type { ErrorCause, ErrorValue } from '../../error/error-value.js';

// 408 (timeout), 409 (conflict, often a lost race) and 429 (rate limit) are the 4xx a second
// try can pass; every other 4xx says the request itself is wrong, and will stay wrong.
const retriedClientStatuses: readonly number[] = [408, 409, 429];

/** What the default policy reads from an error value's details: the data of a thrown error. */
interface Said {
  readonly status?: unknown;
  readonly code?: unknown;
  readonly name?: unknown;
  readonly isRetryable?: unknown;
}

/**
 * The retry predicate a policy without `when` uses (LangGraph.js's default `retryOn`): a
 * failure is worth another attempt unless what threw said otherwise: `isRetryable: false`
 * (the AI SDK's `APICallError`), an HTTP 4xx other than 408, 409 and 429 (on the error or,
 * when it has none, the first cause that has one), an `AbortError`, or OpenAI's
 * `insufficient_quota`. Export it to build on it in a predicate of your own.
 *
 * @example
 * .node('fetch', fetch, { retry: { attempts: 4, when: (e) => defaultRetryWhen(e) && e.details?.status !== 503 } })
 */
export function defaultRetryWhen(error: ErrorValue): boolean {
  const said = (
    typeof error.details === 'object' && error.details !== null ? error.details : {}
  ) as Said;
  if (said.isRetryable === false) return false;
  if (said.name === 'AbortError' || said.code === 'insufficient_quota') return false;
  const status = typeof said.status === 'number' ? said.status : causeStatus(error.cause);
  return !(
    status !== undefined &&
    status >= 400 &&
    status < 500 &&
    !retriedClientStatuses.includes(status)
  );
}

function causeStatus(cause: ErrorCause | undefined): number | undefined {
  for (let c = cause; c !== undefined; c = c.cause) if (c.status !== undefined) return c.status;
  return undefined;
}

/**
 * How long the failure asked to be left alone: its `Retry-After` (seconds, or an HTTP date read
 * against the failure's time `at`), in ms; undefined when it said nothing usable. Pure: the
 * recorded header and the recorded time give the same wait on every replay.
 *
 * @example
 * retryAfterMs({ ...error, details: { retryAfter: '2' } }, 1_000); // 2_000
 */
export function retryAfterMs(error: ErrorValue, at: number | undefined): number | undefined {
  const details = error.details as { retryAfter?: unknown } | undefined;
  const value = typeof details === 'object' && details !== null ? details.retryAfter : undefined;
  if (typeof value !== 'string') return undefined;
  const text = value.trim();
  if (/^\d+(\.\d+)?$/.test(text)) return Math.ceil(Number(text) * 1000);
  const date = Date.parse(text);
  if (Number.isNaN(date) || at === undefined) return undefined;
  return Math.max(0, date - at);
}
