import type { ErrorCode } from '../error/codes.js';
import { isWaymarkError, WaymarkError } from '../error/waymark-error.js';

/** The HTTP status of each refusal: what a client does about it. */
const statusOf: Partial<Record<ErrorCode, number>> = {
  AUTH_REQUIRED: 401,
  RUN_NOT_FOUND: 404,
  WAIT_NOT_FOUND: 404,
  GRAPH_NOT_SERVED: 404,
  REQUEST_TOO_LARGE: 413,
  USAGE_INVALID: 400,
  INPUT_INVALID: 400,
  LIMIT_KEY_INVALID: 400,
  CONTEXT_INVALID: 400,
  OPTIONS_INVALID: 400,
  ANSWER_INVALID: 400,
  MEMORY_INVALID: 400,
  SCHEDULE_INVALID: 400,
  SCHEDULE_NOT_FOUND: 404,
  SIGNAL_INVALID: 400,
  SIGNAL_UNKNOWN: 404,
  // The node named is what is wrong (not one the run can be at): the request changes, not the run.
  GOTO_INVALID: 400,
  RUN_EXISTS: 409,
  RUN_OWNED: 409,
  RUN_QUEUED: 409,
  RUN_NOT_RESUMABLE: 409,
  RUN_NOT_CANCELLABLE: 409,
  RUN_NOT_CONTINUABLE: 409,
  RUN_NOT_PATCHABLE: 409,
  RUN_LIVE: 409,
  RUN_WAITING: 409,
  RUN_REFERENCED: 409,
  WAIT_ALREADY_ANSWERED: 409,
  WAIT_CLOSED: 409,
  STORE_CONFLICT: 409,
  LEASE_LOST: 409,
  GRAPH_MISMATCH: 409,
  STORE_UNAVAILABLE: 503,
};

/** A refusal as the API answers it: the status, and `{ error: { code, message, details } }`. */
export interface HttpError {
  readonly status: number;
  readonly body: {
    readonly error: { readonly code: string; readonly message: string; readonly details: unknown };
  };
}

/**
 * What an error becomes on the wire: a WaymarkError keeps its code and message, with the status
 * its code calls for; anything else is `INTERNAL` (500), its message only.
 *
 * @example
 * const { status, body } = httpError(error); return c.json(body, status);
 */
export function httpError(error: unknown): HttpError {
  if (isWaymarkError(error)) {
    return {
      status: statusOf[error.code] ?? 500,
      body: { error: { code: error.code, message: error.message, details: error.details ?? null } },
    };
  }
  const message = error instanceof Error ? error.message : String(error);
  return { status: 500, body: { error: { code: 'INTERNAL', message, details: null } } };
}

/** A malformed request: its shape, not its content, is wrong. */
export function badRequest(message: string, details?: Record<string, unknown>): WaymarkError {
  return new WaymarkError('USAGE_INVALID', message, {
    retryable: false,
    ...(details !== undefined && { details }),
  });
}
