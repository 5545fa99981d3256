import type { z } from 'zod';
import type { ConcurrencyLimit } from './concurrency.js';
import type { JoinPolicyInput } from './join.js';
import type { NodeKind } from './kinds.js';
import type { NodeDefaults } from './node-defaults.js';
import type { Reducer } from './reducers.js';
import type { RetentionOptions } from './retention.js';
import type { RateLimit, RetryOptions, SpendLimits, Tolerance } from './types.js';
import type { WorkspaceDef } from './workspace.js';

export type Field<S> = keyof S & string;
/** Fields whose value is a list: what a map fan-out can iterate. */
export type ListField<S> = {
  [K in keyof S]-?: S[K] extends readonly unknown[] ? K : never;
}[keyof S] &
  string;

/** Options of {@link graph}. */
export interface GraphOptions<
  Schema extends z.ZodObject,
  In extends z.ZodObject = z.ZodObject,
  Out extends z.ZodObject = z.ZodObject,
> {
  /** The state schema; the state type of every node and router is inferred from it. */
  readonly state: Schema;
  /**
   * The fields a caller may set when starting a run, each a state field; `run()` refuses any
   * other with `INPUT_NOT_ALLOWED`. Absent: every state field is an input.
   */
  readonly input?: In;
  /**
   * The fields a finished run hands back as `result.output`, each a state field. Fields in
   * neither `input` nor `output` are private to the graph. Absent: the output is the state.
   */
  readonly output?: Out;
  /**
   * What a run does with an input field that is not a state field: `'refuse'` (the default)
   * rejects the run with `INPUT_INVALID` and a "did you mean", so a misspelled field is never
   * dropped in silence; `'strip'` drops such fields, as a zod object does, for callers that pass
   * a wider record on purpose. A graph with an `input` schema refuses them as `INPUT_NOT_ALLOWED`.
   */
  readonly unknownInput?: 'refuse' | 'strip';
  /** The graph's version, recorded in every checkpoint. Default 1. */
  readonly version?: number;
  /** Per-field reducers; a field without one is replaced by each update. */
  readonly reducers?: { readonly [K in keyof z.output<Schema>]?: Reducer<z.output<Schema>[K]> };
  /** The state schema's version, recorded in every checkpoint. Default 1. */
  readonly stateVersion?: number;
  /**
   * Upgrades of stored state, keyed by the version they upgrade from: `{ 1: (v1) => v2 }`.
   * Resuming a checkpoint of an older version runs each step up to `stateVersion`.
   */
  readonly migrations?: Readonly<
    Record<number, (state: Record<string, unknown>) => Record<string, unknown>>
  >;
  /**
   * Options every node gets unless it sets its own (LangGraph.js: the graph's `retryPolicy`):
   * `visits` on every node; `retry`, `timeoutMs` and `exec` on nodes that run attempts (code,
   * model, effect; not a person or a subgraph). A node's own option replaces the default whole.
   */
  readonly nodeDefaults?: NodeDefaults;
  /**
   * The schema of the run's context (LangGraph.js: `contextSchema`): a value each run is given
   * when it starts, read by nodes as `ctx.context`, kept once per run and never part of state.
   * A run given a context that does not parse is refused with `CONTEXT_INVALID`.
   */
  readonly context?: z.ZodType;
  /**
   * State fields kept in memory for one drive of a run and never written to its store
   * (LangGraph.js: `UntrackedValue`): a connection, a client, a cache. Each needs a default,
   * which a resume, a worker's step and a replayed decision (a router) see (docs/semantics.md).
   */
  readonly untracked?: readonly (keyof z.output<Schema> & string)[];
  /**
   * How long a finished run is kept, per final status, before workers and `waymark serve`
   * delete it (docs/time.md, "Retention"): `{ succeeded: '30d', failed: '90d' }`. Not part of
   * the structural hash: changing it never strands a run. Absent: runs are kept.
   */
  readonly retention?: RetentionOptions;
  /**
   * At most `concurrency` runs of this graph with the same key run at once, across every
   * process sharing the store (Inngest's and Hatchet's concurrency keys); the others are
   * queued, in order, and say why (docs/time.md, "Limits").
   */
  readonly limits?: ConcurrencyLimit<z.output<Schema>>;
}

/** Options of `.node()`. `W` is inferred from `writes` and narrows what the node may return. */
export interface NodeOptions<S, W extends Field<S> = Field<S>> {
  readonly kind?: NodeKind;
  /** Most activations of this node in one run. Every cycle needs one on some node. */
  readonly visits?: number;
  readonly retry?: RetryOptions;
  /** Per-attempt time limit; `ctx.signal` aborts at it and a late result is discarded. */
  readonly timeoutMs?: number;
  /**
   * Most time an attempt may go without `ctx.heartbeat()` (from its start, then from its last
   * heartbeat): past it the attempt times out as at `timeoutMs` (Temporal: heartbeat timeout).
   */
  readonly idleTimeoutMs?: number;
  /** Node to continue at, with the error recorded, when the node fails for good. */
  readonly onError?: string;
  readonly reads?: readonly Field<S>[];
  /**
   * The node's output depends on the run's context (`ctx.context`): a node that declares `reads`
   * then has the context in its input hash, so an output computed under another context is
   * never reused for it.
   */
  readonly readsContext?: boolean;
  /**
   * Reuse the node's output across runs for `ttlMs` (LangGraph.js: `CachePolicy({ ttl })`): an
   * activation whose key matches an output recorded less than `ttlMs` ago takes that output
   * instead of running, recorded as a reuse in the trace. The key is the node's input hash (it
   * needs `reads`), or what `key(state)` returns. Needs a store; `clearCache` forgets.
   */
  readonly cache?: { readonly ttlMs: number; readonly key?: (state: Readonly<S>) => string };
  /**
   * The node's body starts no earlier than this time (a `Date` or ms since the epoch), taken
   * from the state the node sees when the run reaches it (Temporal: a timer before the
   * activity; DBOS: `DBOS.sleep` before the step). Until then the run sleeps durably, as at a
   * `sleep()` node; a time in the past starts the body at once. Not on a person or a sleep.
   */
  readonly notBefore?: (state: Readonly<S>) => Date | number;
  readonly writes?: readonly W[];
  /** Programs `ctx.exec` may start in this node, e.g. `['node', 'git']`; absent: none. */
  readonly exec?: readonly string[];
  /** The node ends its path when it completes. */
  readonly terminal?: boolean;
  /**
   * In a graph run as a subgraph: the nodes of the parent (or END) this node may send the run to
   * by returning `parent({ goto, update })` (LangGraph.js: `Command.PARENT`). The parent's
   * compile checks them as it checks a router's targets. A node with no other way out ends
   * the child when it returns a plain update.
   */
  readonly parentGoto?: readonly string[];
  /** Bump when the node's behaviour changes. Default 1. */
  readonly version?: number;
  /** Makes the node a join: how the branches of the fan-out that names it are combined. */
  readonly join?: JoinPolicyInput<S>;
  /** Failed branches a join tolerates (a count or `'10%'`); default: fail fast. */
  readonly tolerate?: Tolerance;
  /** What one attempt may spend, for the cost bound; `model()` and `agent()` declare their own. */
  readonly spend?: SpendLimits;
  /**
   * A shared resource's quota this node's attempts count against (DBOS: a queue's
   * `rateLimit`; Temporal: a task queue's rate limit; Inngest: `rateLimit`/`throttle`). Each
   * attempt is admitted through the store before its body runs; one over the quota is not an
   * attempt: the run sleeps durably until the window has room, holding no worker, and runs it
   * then. `model()` and `agent()` take it too. Needs a store that keeps rates.
   */
  readonly rateLimit?: RateLimit;
  /**
   * The node works in its own working copy of `repo` and its update carries the patch in state
   * field `patch`, which is added to its `reads` and `writes` (docs/workspaces.md).
   */
  readonly workspace?: WorkspaceOptions<S>;
}

/** The `workspace` option of a node: {@link WorkspaceDef}, with the patch field type-checked. */
export interface WorkspaceOptions<S> extends Omit<WorkspaceDef, 'patch'> {
  readonly patch: Field<S>;
}

/** Options of `.map()`. */
export interface MapOptions<S, N extends string> {
  /** The state field whose items get one branch each. */
  readonly over: ListField<S>;
  /** The first node of every branch; it finds its item in `ctx.item` and `ctx.index`. */
  readonly branch: N;
  /** The join node the branches end at. */
  readonly join: N;
  /** Most branches running at once. Default 16. */
  readonly concurrency?: number;
  /**
   * Most items the map takes (a longer list fails the fanning-out node with `MAP_TOO_LONG`), so
   * the cost bound can count its branches; without it the bound reads the field's `.max()`.
   */
  readonly maxItems?: number;
}
