import { WaymarkError } from './waymark-error.js';

/**
 * The error for one run's stored data that cannot be read: a damaged row, JSON that does not
 * parse, a value of the wrong shape. It names the run, so only that run's calls fail with it,
 * and every layer that reads stored data (stores, codec, command) words it the same.
 *
 * @example
 * throw storeCorrupt('r1', 'its events jump from seq 2 to seq 4', { table: 'events' });
 */
export function storeCorrupt(
  runId: string,
  why: string,
  details: object = {},
  cause?: unknown,
): WaymarkError {
  return new WaymarkError('STORE_CORRUPT', `run "${runId}" cannot be read: ${why}`, {
    retryable: false,
    details: { runId, ...details },
    ...(cause !== undefined && { cause }),
  });
}

/**
 * A JSON text the store holds for a run (an answer, a wait's request, a snapshot), parsed, or
 * STORE_CORRUPT naming the run and `what` it was: a damaged row is never an uncoded SyntaxError.
 *
 * @example
 * const answer = storedJson(wait.answer, runId, `the answer to wait "${wait.requestId}"`);
 */
export function storedJson(
  text: string,
  runId: string,
  what: string,
  parse: (text: string) => unknown = JSON.parse,
): unknown {
  try {
    return parse(text);
  } catch (cause) {
    throw storeCorrupt(runId, `${what} is not valid JSON`, {}, cause);
  }
}

/** A JSON object (not null, not an array): the shape check every stored record starts with. */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
