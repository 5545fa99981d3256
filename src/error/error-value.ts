import type { ErrorClass, ErrorCode } from './codes.js';
import { type ThrownData, thrownData } from './thrown-data.js';

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
  /**
   * Where a node's thrown error came from: its stack as the node's code left it, without the
   * engine's frames that called the node, and cut at 4,000 characters.
   */
  readonly stack?: string;
  /** What the thrown error wrapped (`new Error(msg, { cause })`), outermost first. */
  readonly cause?: ErrorCause;
}

/** One link of a thrown error's `cause` chain, as recorded: plain data, JSON-serialisable. */
export interface ErrorCause {
  readonly message: string;
  /** The cause's own `code` when it has a string one (`ECONNRESET`, a WaymarkError's code). */
  readonly code?: string;
  /** The cause's `name` when it is not the plain `'Error'`. */
  readonly name?: string;
  /** The cause's HTTP status, found as in {@link ThrownData} (a wrapped `APICallError`'s). */
  readonly status?: number;
  readonly stack?: string;
  readonly cause?: ErrorCause;
}

// A stack or a cause chain is for a person reading a failure; bounded, so one failure cannot
// make an event row (and every load after it) arbitrarily large.
const maxStackChars = 4_000;
const maxCauseDepth = 4;

/**
 * The stack and cause chain of what a node threw, as data for its error value; nothing for a
 * thrown non-Error.
 *
 * @example
 * const value = { ...errorValue(where, 'NODE_FAILED', 'transient', e.message), ...provenance(e) };
 */
export function provenance(thrown: unknown): { stack?: string; cause?: ErrorCause } {
  if (!(thrown instanceof Error)) return {};
  const stack = trimStack(thrown.stack);
  const cause = causeOf(thrown.cause, maxCauseDepth);
  return {
    ...(stack !== undefined && { stack }),
    ...(cause !== undefined && { cause }),
  };
}

function causeOf(value: unknown, depth: number): ErrorCause | undefined {
  if (value === undefined || value === null || depth === 0) return undefined;
  if (!(value instanceof Error)) return { message: String(value) };
  const code = (value as { code?: unknown }).code;
  const data = thrownData(value);
  const stack = trimStack(value.stack);
  const inner = causeOf(value.cause, depth - 1);
  return {
    message: value.message,
    ...(typeof code === 'string' && { code }),
    ...(data?.name !== undefined && { name: data.name }),
    ...(data?.status !== undefined && { status: data.status }),
    ...(stack !== undefined && { stack }),
    ...(inner !== undefined && { cause: inner }),
  };
}

// Where waymark's engine lives (src/ under tsx, dist/ once built), as URLs and as paths: the
// frames there call a node, a router or a reducer, and everything below them is the engine and
// whoever started the run. The node's context (ctx.effect) and the model and workspace helpers a
// node calls are elsewhere, so their frames stay.
const ownRoot = new URL('../', import.meta.url);
const engineFolders = [
  'runtime/attempt/execute.',
  'runtime/core/',
  'runtime/engine/',
  'runtime/local/',
  'runtime/worker/',
];
const engineMarks = engineFolders.flatMap((folder) => {
  const url = new URL(folder, ownRoot);
  return url.protocol === 'file:' ? [url.href, decodeURI(url.pathname)] : [url.href];
});
const isEngineFrame = (line: string) =>
  line.trimStart().startsWith('at ') && engineMarks.some((mark) => line.includes(mark));

function trimStack(stack: string | undefined): string | undefined {
  if (typeof stack !== 'string' || stack.length === 0) return undefined;
  const kept = withoutEngineFrames(stack);
  return kept.length > maxStackChars ? `${kept.slice(0, maxStackChars)}\n    ...` : kept;
}

/**
 * The stack down to where the engine called the code that threw: the frames below (the
 * executor, the drive, the host, the caller of `run()`) say nothing about the failure, and every
 * stored copy of it pays for them. The first frame always stays.
 */
function withoutEngineFrames(stack: string): string {
  // The first frame stays, so an error the engine made itself still says where.
  let start = stack.indexOf('\n', stack.indexOf('\n') + 1);
  while (start !== -1) {
    const end = stack.indexOf('\n', start + 1);
    const line = stack.slice(start + 1, end === -1 ? stack.length : end);
    if (isEngineFrame(line)) return stack.slice(0, start);
    start = end;
  }
  return stack;
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
