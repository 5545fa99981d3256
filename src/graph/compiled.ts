import type { z } from 'zod';
import type { ErrorValue } from '../error/error-value.js';
import type { ConcurrencyLimit } from './concurrency.js';
import type { KindTraits } from './kinds.js';
import type { WaitSpec } from './person.js';
import type { Reducer } from './reducers.js';
import type { RetentionPolicy } from './retention.js';
import type { SleepSpec } from './sleep.js';
import type { FanOutDef, GraphDef, JoinDef, NodeDef, NodeFn, RouterFn } from './types.js';
import type { Untracked } from './untracked.js';

/** A node ready for the scheduler: its data, its function and its exits resolved once. */
export interface RuntimeNode {
  readonly def: NodeDef;
  /** The key function of the node's `cache`, when it has one. */
  readonly cacheKey?: (state: unknown) => string;
  readonly fn: NodeFn<unknown, unknown>;
  readonly traits: KindTraits;
  /** The static edge's target (a node or END), if the node has one. */
  readonly next: string | undefined;
  readonly router:
    | { readonly fn: RouterFn<unknown>; readonly targets: ReadonlySet<string> }
    | undefined;
  /** Visit cap, Infinity when none is declared. */
  readonly cap: number;
  /**
   * Whether the node can run more than once in a run (a cycle, a branch, a cap): only those
   * have their visits counted, so a long chain does not carry a growing visit table.
   */
  readonly repeats: boolean;
  /**
   * Set when the node reads an untracked field: the `reads` its input hash covers, without
   * those fields (their value is not recorded, so a rerun could not match it).
   */
  readonly hashed?: readonly string[];
  /** What the node may read, or undefined when it did not declare `reads` (it sees all). */
  readonly reads: ReadAccess | undefined;
  /** Fields the node may write, or undefined when it did not declare `writes`. */
  readonly writes: ReadonlySet<string> | undefined;
  /**
   * What the node's router may read: its `reads` and its `writes` (a router decides on what its
   * node found); undefined, all, when either is undeclared.
   */
  readonly routerReads: ReadAccess | undefined;
  /** The fan-out this node starts when it completes, if any (it then has no edge or router). */
  readonly fanOut: FanOutDef | undefined;
  /** Set on a person node: the wait it opens instead of running a function. */
  readonly wait: WaitSpec | undefined;
  /** Set on a sleep node: how long it sleeps instead of running a function. */
  readonly sleep?: SleepSpec;
  /** The retry policy's predicate, if it has one: a failure is retried only when it says so. */
  readonly retryWhen?: (error: ErrorValue) => boolean;
  /** Set when this node is a join. */
  readonly join:
    | { readonly def: JoinDef; readonly score: ((branchState: unknown) => number) | undefined }
    | undefined;
  /** Set on a node of a subgraph (`review/plan`): where its state lives in the run's state. */
  readonly scope?: Scope;
  /**
   * Set on a subgraph's entry (`review`) and exit (`review/__end__`): the step applies `fn`
   * itself when the node is reached, as part of the transition that reached it, instead of
   * scheduling an activation (no attempt, no commit of its own). `fn` is a pure mapping of the
   * node's view, like a router, so a replay computes the same update. `enter` starts a child
   * scope, `leave` ends one.
   */
  readonly inline?: Inline;
}

/**
 * What an inline node computes: the update of its mapping, from its view of the state and, in a
 * map branch, the branch's item.
 *
 * @example
 * { scope: 'enter', slot: '@review', capped: false, fn: (state, { item }) => ({ '@review': { set: { draft: item } } }) }
 */
export interface Inline {
  readonly scope: 'enter' | 'leave';
  /** The private field the subgraph's state lives in while it runs. */
  readonly slot: string;
  /**
   * On an exit: whether a node of the child has a visit cap, counted per entry of the child;
   * only then has the exit counts to drop.
   */
  readonly capped: boolean;
  readonly fn: (
    state: Readonly<Record<string, unknown>>,
    branch: { readonly item: unknown; readonly index: number | undefined },
  ) => unknown;
}

/**
 * Where the nodes of a subgraph find their state: the private fields to descend through from
 * the run's state (`['@review']`, `['@review', '@inner']` one level deeper), and the field schemas
 * of the innermost graph, which its nodes' updates are parsed by before being wrapped back.
 *
 * @example
 * { path: ['@review'], graph: 'review', fieldSchemas: reviewGraph.fieldSchemas }
 */
export interface Scope {
  readonly path: readonly string[];
  readonly graph: string;
  readonly fieldSchemas: ReadonlyMap<string, z.ZodType>;
}

/**
 * A node's declared `reads`, resolved once at compile: the fields it may read, and every state
 * field of the graph (reading one of those outside `fields` is `READ_DENIED`).
 *
 * @example
 * { node: 'summarize', fields: new Set(['notes']), all: new Set(['notes', 'summary', 'secret']) }
 */
export interface ReadAccess {
  readonly node: string;
  readonly fields: ReadonlySet<string>;
  readonly all: ReadonlySet<string>;
}

/**
 * A validated graph: the plain-data declaration, its structural hash, and the tables the runtime
 * needs. Produced only by `.compile()`, so holding one means the graph passed validation.
 *
 * @example
 * const g = graph('hello', { state }).node('greet', greet).edge('greet', END).entry('greet').compile();
 * console.log(JSON.stringify(g.def), g.hash);
 */
export interface CompiledGraph<S = Record<string, unknown>, I = S, O = S> {
  readonly name: string;
  readonly version: number;
  /** The state schema's version; checkpoints of older versions are upgraded by `migrations`. */
  readonly stateVersion: number;
  /** State upgrades by the version they upgrade from. */
  readonly migrations: ReadonlyMap<
    number,
    (state: Record<string, unknown>) => Record<string, unknown>
  >;
  readonly def: GraphDef;
  /** sha256 of the declaration's structure; changes when nodes, edges, routes or options do. */
  readonly hash: string;
  readonly schema: z.ZodObject;
  /** The fields a caller may set, when the graph declares an `input` schema. */
  readonly input?: z.ZodObject;
  /** Set when the graph drops input fields that are not state fields (`unknownInput: 'strip'`). */
  readonly stripsUnknownInput?: true;
  /** The fields a run hands back as `result.output`, when the graph declares an `output` schema. */
  readonly output?: z.ZodObject;
  /** The schema of the run's context (`ctx.context`), when the graph declares one. */
  readonly context?: z.ZodType;
  readonly entry: string;
  readonly nodes: ReadonlyMap<string, RuntimeNode>;
  readonly fieldSchemas: ReadonlyMap<string, z.ZodType>;
  /** Reducer per field; fields absent here are replaced. */
  readonly reducers: ReadonlyMap<string, Reducer>;
  /** How long its finished runs are kept, in ms by status, when the graph declares it. */
  readonly retention?: RetentionPolicy;
  /** The fields kept out of the store (`untracked`), when the graph declares any. */
  readonly untracked?: Untracked;
  /** At most this many running runs per key (`limits`), when the graph declares it. */
  readonly limits?: ConcurrencyLimit;
  /**
   * Type-only carrier of the state, input and output types; always undefined at run time. The
   * output is a method parameter so that a graph with an output schema still fits where any
   * graph of its state is expected.
   */
  readonly types?: { readonly state: S; readonly input: I; output?(value: O): void };
}
