import type { ErrorValue } from '../error/error-value.js';
import type { RuntimeNode } from './compiled.js';
import { END } from './end.js';
import { kindTraits } from './kinds.js';
import { waitSpecOf } from './person.js';
import { type NotBefore, sleepSpecOf } from './sleep.js';
import type { GraphDef, NodeFn, RouterFn } from './types.js';

/** The function tables a builder keeps beside its plain-data declaration. */
export interface FunctionTables {
  readonly fns: ReadonlyMap<string, NodeFn<unknown, unknown>>;
  readonly routers: ReadonlyMap<string, RouterFn<unknown>>;
  readonly scores: ReadonlyMap<string, (branchState: unknown) => number>;
  readonly retryWhens: ReadonlyMap<string, (error: ErrorValue) => boolean>;
  readonly cacheKeys?: ReadonlyMap<string, (state: unknown) => string>;
  readonly notBefores?: ReadonlyMap<string, NotBefore>;
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/**
 * Resolves a validated declaration into the nodes the scheduler runs, each with its exits
 * looked up once. One pass over the nodes, one over each exit list: compile stays linear, and
 * no intermediate name-keyed maps are built for a 10,000-node graph.
 */
export function runtimeNodes(
  def: GraphDef,
  repeatable: ReadonlySet<string>,
  tables: FunctionTables,
): Map<string, RuntimeNode> {
  const nodes = new Map<string, Mutable<RuntimeNode>>();
  // One set of the graph's fields, shared by every node that declares reads.
  let all: ReadonlySet<string> | undefined;
  const untracked = def.untracked === undefined ? undefined : new Set(def.untracked);
  for (const node of def.nodes) {
    if (node.reads !== undefined) all ??= new Set(def.fields);
    const join = node.join && { def: node.join, score: tables.scores.get(node.name) };
    nodes.set(node.name, {
      def: node,
      fn: tables.fns.get(node.name)!,
      traits: kindTraits[node.kind],
      // A node that may send to its parent and has no other way out ends its child otherwise.
      next: node.terminal || node.parentGoto !== undefined ? END : undefined,
      router: undefined,
      cap: node.visits ?? Number.POSITIVE_INFINITY,
      repeats: node.visits !== undefined || repeatable.has(node.name),
      reads: node.reads && { node: node.name, fields: new Set(node.reads), all: all! },
      writes: node.writes && new Set(node.writes),
      routerReads: node.reads &&
        node.writes && {
          node: node.name,
          fields: new Set([...node.reads, ...node.writes]),
          all: all!,
        },
      fanOut: undefined,
      join,
      wait: waitSpecOf(tables.fns.get(node.name)),
      ...(sleeps(tables.fns.get(node.name)) && { sleep: sleepSpecOf(tables.fns.get(node.name))! }),
      ...(tables.notBefores?.has(node.name) && {
        sleep: { until: tables.notBefores.get(node.name)!, thenRun: true as const },
      }),
      ...(tables.retryWhens.has(node.name) && { retryWhen: tables.retryWhens.get(node.name)! }),
      ...(tables.cacheKeys?.has(node.name) && { cacheKey: tables.cacheKeys.get(node.name)! }),
      ...(untracked !== undefined &&
        node.reads?.some((f) => untracked.has(f)) && {
          hashed: node.reads.filter((f) => !untracked.has(f)),
        }),
    });
  }
  for (const edge of def.edges) nodes.get(edge.from)!.next = edge.to;
  for (const route of def.routes) {
    nodes.get(route.from)!.router = {
      fn: tables.routers.get(route.from)!,
      targets: new Set(route.targets),
    };
  }
  for (const fanOut of def.fanOuts) nodes.get(fanOut.from)!.fanOut = fanOut;
  return nodes;
}

function sleeps(fn: unknown): boolean {
  return sleepSpecOf(fn) !== undefined;
}
