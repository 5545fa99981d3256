import type { ErrorClass, ErrorCode } from './codes.js';

// A registry symbol, not a class identity: two copies of waymark in one process (a dependency
// tree with two versions) must still recognise each other's errors.
const marker = Symbol.for('waymark.error');

/** Options of a {@link WaymarkError}. */
export interface WaymarkErrorOptions {
  /** Structured data a caller can act on (the diagnostics of GRAPH_INVALID, the issues of INPUT_INVALID). */
  details?: unknown;
  /** Whether running the same thing again may succeed; defaults by class. */
  retryable?: boolean;
  /** The classification used by retry policies and error values. */
  errorClass?: ErrorClass;
  /** The underlying error, if any. */
  cause?: unknown;
}

/**
 * The one error class of waymark. The stable `code` is in the message so a log line alone says it.
 *
 * @example
 * throw new WaymarkError('UPDATE_INVALID', 'field "count" expected a number', { retryable: false });
 */
export class WaymarkError extends Error {
  override readonly name = 'WaymarkError';
  readonly code: ErrorCode;
  readonly details: unknown;
  readonly retryable: boolean;
  readonly errorClass: ErrorClass;
  readonly [marker] = true;

  constructor(code: ErrorCode, message: string, options: WaymarkErrorOptions = {}) {
    super(
      `${code}: ${message}`,
      options.cause === undefined ? undefined : { cause: options.cause },
    );
    this.code = code;
    this.details = options.details;
    this.errorClass =
      options.errorClass ?? (options.retryable === false ? 'permanent' : 'transient');
    this.retryable = options.retryable ?? this.errorClass === 'transient';
  }
}

/**
 * True for a WaymarkError from any copy of the package (cross-realm safe, unlike `instanceof`).
 *
 * @example
 * try { builder.compile(); } catch (e) { if (isWaymarkError(e) && e.code === 'GRAPH_INVALID') report(e.details); }
 */
export function isWaymarkError(value: unknown): value is WaymarkError {
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as Record<symbol, unknown>)[marker] === true
  );
}

/**
 * A node throws this to say "trying again will not help": the retry policy is skipped.
 *
 * @example
 * if (!file) throw permanentError('the changelog is empty');
 */
export function permanentError(message: string, details?: unknown): WaymarkError {
  return new WaymarkError('NODE_FAILED', message, { retryable: false, details });
}
