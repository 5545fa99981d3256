import type { ErrorClass, ErrorCode } from '../../error/codes.js';
import { type ErrorValue, errorValue, provenance } from '../../error/error-value.js';
import { isWaymarkError } from '../../error/waymark-error.js';

/** What a call of user code gave: its value, or what it threw. */
export type Called<T> = { readonly ok: true; readonly value: T } | Threw;

/** A call of user code that threw. */
export interface Threw {
  readonly ok: false;
  readonly thrown: unknown;
}

/**
 * The one funnel every call of user code in the runtime goes through (a router, a reducer, a
 * prompt, a score, a retry predicate, a schema's refinement, an answer's update, a migration):
 * a throw becomes a value the caller turns into an error value, so nothing a user writes can
 * reject the runtime's own promise or make an event poison to replay.
 *
 * @example
 * const target = callUser(() => router.fn(view));
 * if (!target.ok) fail(userError(where, 'ROUTER_FAILED', 'the router of "plan" threw', target.thrown));
 */
export function callUser<T>(fn: () => T): Called<T> {
  try {
    return { ok: true, value: fn() };
  } catch (thrown) {
    return { ok: false, thrown };
  }
}

/** Where an error value belongs: the node, the activation and the attempt. */
export interface Where {
  readonly node: string;
  readonly activation: string;
  readonly attempt: number;
}

/**
 * The error value of a call of user code that threw. A `READ_DENIED` from a read view keeps its
 * code, message and details wherever it was thrown, so a router or a prompt reading a field it
 * may not read fails as a node body would; anything else gets `code`, with `what` and the thrown
 * message, and the thrown error's stack and cause.
 *
 * @example
 * userError(where, 'REDUCER_FAILED', 'the reducer of "log" threw', thrown);
 */
export function userError(
  where: Where,
  code: ErrorCode,
  what: string,
  thrown: unknown,
  details?: unknown,
  errorClass: ErrorClass = 'permanent',
): ErrorValue {
  if (isWaymarkError(thrown) && thrown.code === 'READ_DENIED') {
    const message = withoutCode(thrown.message, 'READ_DENIED');
    return errorValue(where, 'READ_DENIED', 'permanent', message, {
      ...(details as object | undefined),
      ...(thrown.details as object | undefined),
    });
  }
  const message = `${what}: ${messageOf(thrown)}`;
  return { ...errorValue(where, code, errorClass, message, details), ...provenance(thrown) };
}

/** The message of anything thrown: an Error's own, without a WaymarkError's code prefix. */
export function messageOf(thrown: unknown): string {
  if (isWaymarkError(thrown)) return withoutCode(thrown.message, thrown.code);
  return thrown instanceof Error ? thrown.message : String(thrown);
}

function withoutCode(message: string, code: string): string {
  return message.startsWith(`${code}: `) ? message.slice(code.length + 2) : message;
}
