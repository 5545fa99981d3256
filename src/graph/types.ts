import type { ErrorClass } from '../error/codes.js';
import type { ErrorValue } from '../error/error-value.js';
import type { NodeKind } from './kinds.js';

/**
 * How a node's failed attempts are tried again. `attempts` counts every attempt, the first one
 * included; the wait before attempt n+1 is `backoffMs * factor^(n-1)`, at most `maxBackoffMs`.
 *
 * @example
 * .node('search', search, { retry: { attempts: 3, backoffMs: 200, factor: 2 } })
 */
export interface RetryPolicy {
  readonly attempts: number;
  readonly backoffMs?: number;
  readonly factor?: number;
  readonly maxBackoffMs?: number;
  /** Error classes worth another attempt; default `['transient', 'timeout']`. */
  readonly retryOn?: readonly ErrorClass[];
}

/** The plain-data description of one node: everything but its function. */
export interface NodeDef {
  readonly name: string;
  readonly kind: NodeKind;
  /** Most activations this node may have in one run; required somewhere on every cycle. */
  readonly visits?: number;
  readonly retry?: RetryPolicy;
  readonly timeoutMs?: number;
  /** The node a failure routes to, with the error recorded, once retries are spent. */
  readonly onError?: string;
  readonly reads?: readonly string[];
  readonly writes?: readonly string[];
  /** A terminal node ends its path when it completes (as if it had an edge to END). */
  readonly terminal?: boolean;
  /** Bump when the node's behaviour changes, so recorded outputs are not reused for it. */
  readonly version: number;
}

/** A static edge: when `from` completes, `to` runs next. */
export interface EdgeDef {
  readonly from: string;
  readonly to: string;
}

/** A router attached to `from`, with every target it may return declared up front. */
export interface RouteDef {
  readonly from: string;
  readonly targets: readonly string[];
}

/**
 * A graph as plain, JSON-serialisable data. The validator, renderers, CLI and stores read only
 * this; functions live beside it in the compiled graph's tables.
 */
export interface GraphDef {
  readonly name: string;
  readonly version: number;
  /** State fields, in schema order. */
  readonly fields: readonly string[];
  /** Reducer name per field that does not use the default `replace`. */
  readonly reducers: Readonly<Record<string, string>>;
  readonly entry: string | null;
  readonly nodes: readonly NodeDef[];
  readonly edges: readonly EdgeDef[];
  readonly routes: readonly RouteDef[];
}

/**
 * What a node function receives besides the state.
 *
 * @example
 * .node('fetch', async (s, ctx) => ({ body: await (await fetch(s.url, { signal: ctx.signal })).text() }))
 */
export interface NodeContext {
  readonly runId: string;
  /** Stable id of this activation (`node:visit`), the same on every attempt and after resume. */
  readonly activationId: string;
  readonly node: string;
  /** 1 for the first attempt. */
  readonly attempt: number;
  /** Aborted when the node times out or the run is cancelled; pass it to anything that waits. */
  readonly signal: AbortSignal;
  /** Every error value recorded in the run so far, oldest first. */
  readonly errors: readonly ErrorValue[];
  /** The error that routed the run here through an `onError` target, if that is how it came. */
  readonly error: ErrorValue | undefined;
}

/** A node body: reads the frozen state, returns an update (or nothing); never mutates. */
export type NodeFn<S, U = Partial<S>> = (
  state: Readonly<S>,
  ctx: NodeContext,
) => NodeResult<U> | Promise<NodeResult<U>>;

// biome-ignore lint/suspicious/noConfusingVoidType: `void` lets a node with no return statement type-check.
type NodeResult<U> = U | undefined | void;

/** A pure function of the state that picks the next node among declared targets. */
export type RouterFn<S, T extends string = string> = (state: Readonly<S>) => T;
