import type { ErrorClass, ErrorCode } from './codes.js';

/**
 * A failure recorded as data in the run, never thrown through the caller: the node and
 * activation it belongs to, the attempt that produced it, its stable code and its class.
 *
 * @example
 * const last = result.errors.at(-1); // { node: 'verify', code: 'NODE_FAILED', class: 'transient', ... }
 */
export interface ErrorValue {
  readonly node: string;
  /** The activation that failed, or for a cap, the activation that tried to go past it. */
  readonly activation: string;
  readonly attempt: number;
  readonly code: ErrorCode;
  readonly class: ErrorClass;
  readonly message: string;
  /** Structured details (zod issues, the undeclared route value), JSON-serialisable. */
  readonly details?: unknown;
}

/**
 * Builds an error value; `details` is left out when undefined so values compare and serialise cleanly.
 *
 * @example
 * errorValue({ node: 'plan', activation: 'plan:4', attempt: 0 }, 'VISIT_CAP', 'cap', 'node "plan" reached its visit cap of 3');
 */
export function errorValue(
  where: { readonly node: string; readonly activation: string; readonly attempt: number },
  code: ErrorCode,
  errorClass: ErrorClass,
  message: string,
  details?: unknown,
): ErrorValue {
  const value = {
    node: where.node,
    activation: where.activation,
    attempt: where.attempt,
    code,
    class: errorClass,
    message,
  };
  return details === undefined ? value : { ...value, details };
}
