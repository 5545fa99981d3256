import type { z } from 'zod';
import type { ErrorValue } from '../error/error-value.js';
import type { KindTraits } from './kinds.js';
import type { WaitSpec } from './person.js';
import type { Reducer } from './reducers.js';
import type { FanOutDef, GraphDef, JoinDef, NodeDef, NodeFn, RouterFn } from './types.js';

/** A node ready for the scheduler: its data, its function and its exits resolved once. */
export interface RuntimeNode {
  readonly def: NodeDef;
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
  /** The retry policy's predicate, if it has one: a failure is retried only when it says so. */
  readonly retryWhen?: (error: ErrorValue) => boolean;
  /** Set when this node is a join. */
  readonly join:
    | { readonly def: JoinDef; readonly score: ((branchState: unknown) => number) | undefined }
    | undefined;
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
export interface CompiledGraph<S = Record<string, unknown>, I = S> {
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
  readonly entry: string;
  readonly nodes: ReadonlyMap<string, RuntimeNode>;
  readonly fieldSchemas: ReadonlyMap<string, z.ZodType>;
  /** Reducer per field; fields absent here are replaced. */
  readonly reducers: ReadonlyMap<string, Reducer>;
  /** Type-only carrier of the state and input types; always undefined at run time. */
  readonly types?: { readonly state: S; readonly input: I };
}
