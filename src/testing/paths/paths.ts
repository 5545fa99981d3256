import type { CompiledGraph, RuntimeNode } from '../../graph/compiled.js';
import { END } from '../../graph/end.js';
import { declaredName } from '../../graph/subgraph.js';
import { errorItem, routeItem, waitItem } from '../coverage/items.js';

/**
 * One decision of a path: how the run leaves `node`. `edge` follows its static edge, `route` a
 * router's target (END among them), `error` its `onError` edge (the node failed), `fanOut` the
 * fan-out it starts (its branches run, and the path goes on at the join), `end` a terminal node,
 * or a static edge to END.
 */
export interface PathStep {
  /** The node as declared (a subgraph's nodes as `review/plan`). */
  readonly node: string;
  readonly via: 'edge' | 'route' | 'error' | 'fanOut' | 'end';
  /** Where it goes: a node, or `__end__`; absent for a terminal node's end. */
  readonly to?: string;
  /** For a fan-out: the branches' first nodes (a map: its one branch node). */
  readonly branches?: readonly string[];
  /** The node is a person: the path's run answers its wait before it goes on. */
  readonly waits?: true;
}

/** One way through a graph from its entry to an end, decision by decision. */
export interface GraphPath {
  /** Readable and stable: the nodes it runs, the decisions that are choices in brackets. */
  readonly name: string;
  readonly steps: readonly PathStep[];
  /** The nodes it runs, in order, as the run's `trace.path` lists them. */
  readonly nodes: readonly string[];
  /** The coverage items (docs/testing.md) the path exercises: `route a -> b`, `error a -> c`, `wait p`. */
  readonly items: readonly string[];
}

/** Options of {@link graphPaths}. */
export interface GraphPathOptions {
  /**
   * How often one path may pass the same node, never past its visit cap: 2 (the default) takes
   * each way back of a loop once, so every route of a loop is on some path; 1 gives simple paths
   * (no node twice); more unrolls loops further.
   */
  readonly visits?: number;
  /** Longest path, in steps. Default 50. */
  readonly maxSteps?: number;
  /** Most paths listed; past it the listing stops and says so (`truncated`). Default 1,000. */
  readonly maxPaths?: number;
}

/** Every path of a graph under the bounds, and the shortest path that exercises each item. */
export interface GraphPaths {
  readonly paths: readonly GraphPath[];
  /**
   * For each node, and each coverage item a path can exercise, the shortest listed path that
   * reaches it: one case per entry covers every route, error edge and wait the listing reaches.
   */
  readonly shortest: ReadonlyMap<string, GraphPath>;
  /** The listing stopped at `maxPaths`; paths cut by `maxSteps` are counted in `cut`. */
  readonly truncated: boolean;
  readonly cut: number;
}

/**
 * The paths through a compiled graph from its entry, as its declarations allow them (xstate's
 * simple paths, for graphs): each router target, each `onError` edge and each static edge is a
 * way on; a fan-out is one step to its join (the branches' own paths are not multiplied in);
 * a subgraph's nodes are on the path under its name. Routers are not called: a path is what the
 * declaration allows, not what a state makes a router choose. Pure: reads only the graph.
 *
 * @example
 * const { paths, shortest } = graphPaths(triage);
 * paths.map((p) => p.name); // ['classify [route -> fix] fix [edge] ...', ...]
 */
export function graphPaths(graph: CompiledGraph, options: GraphPathOptions = {}): GraphPaths {
  const visits = options.visits ?? 2;
  const maxSteps = options.maxSteps ?? 50;
  const maxPaths = options.maxPaths ?? 1_000;
  const paths: GraphPath[] = [];
  let truncated = false;
  let cut = 0;
  const counts = new Map<string, number>();
  const steps: PathStep[] = [];

  const walk = (at: string): void => {
    if (paths.length >= maxPaths) {
      truncated = true;
      return;
    }
    const node = graph.nodes.get(at)!;
    const seen = counts.get(at) ?? 0;
    if (seen >= Math.min(visits, node.cap)) return;
    if (steps.length >= maxSteps) {
      cut++;
      return;
    }
    counts.set(at, seen + 1);
    for (const step of waysOn(graph, at, node)) {
      steps.push(step);
      if (step.to === undefined || step.to === END) paths.push(pathOf(graph, steps));
      else walk(step.to);
      steps.pop();
    }
    counts.set(at, seen);
  };
  walk(graph.entry);
  return { paths, shortest: shortestOf(graph, paths), truncated, cut };
}

/** The ways a run can leave a node, in declaration order, its error edge last. */
function waysOn(graph: CompiledGraph, at: string, node: RuntimeNode): PathStep[] {
  const name = at;
  const waits = node.wait !== undefined ? ({ waits: true } as const) : {};
  const ways: PathStep[] = [];
  if (node.fanOut !== undefined) {
    const fan = node.fanOut;
    ways.push({
      node: name,
      via: 'fanOut',
      to: fan.join,
      branches: fan.kind === 'fixed' ? fan.branches : [fan.branch],
      ...waits,
    });
  } else if (node.router !== undefined) {
    for (const to of node.router.targets) ways.push({ node: name, via: 'route', to, ...waits });
  } else if (node.next !== undefined) {
    ways.push({ node: name, via: node.next === END ? 'end' : 'edge', to: node.next, ...waits });
  } else {
    ways.push({ node: name, via: 'end', ...waits });
  }
  // A subgraph's exit carries its node's onError as well as its entry: one declared edge.
  const onError = node.def.onError;
  if (onError !== undefined && node.inline?.scope !== 'leave')
    ways.push({ node: name, via: 'error', to: graph.nodes.has(onError) ? onError : END });
  return ways;
}

function pathOf(graph: CompiledGraph, steps: readonly PathStep[]): GraphPath {
  const nodes: string[] = [];
  const items: string[] = [];
  const named: string[] = [];
  for (const step of steps) {
    const node = graph.nodes.get(step.node)!;
    const declared = declaredName(step.node);
    if (node.inline === undefined) nodes.push(step.node);
    if (step.waits) items.push(waitItem(declared).id);
    const to = step.to === undefined ? undefined : declaredName(step.to);
    if (step.via === 'error') items.push(errorItem(declared, to!).id);
    if (node.router !== undefined && step.via !== 'error' && to !== undefined)
      items.push(routeItem(declared, to).id);
    if (node.inline?.scope === 'leave') continue;
    const choice = node.router !== undefined || step.via === 'error';
    named.push(choice ? `${declared} [${step.via} -> ${to}]` : declared);
  }
  return { name: named.join(' '), steps: [...steps], nodes, items };
}

function shortestOf(graph: CompiledGraph, paths: readonly GraphPath[]): Map<string, GraphPath> {
  const shortest = new Map<string, GraphPath>();
  const keep = (key: string, path: GraphPath) => {
    const kept = shortest.get(key);
    if (kept === undefined || path.steps.length < kept.steps.length) shortest.set(key, path);
  };
  for (const path of paths) {
    for (const node of path.nodes) keep(node, path);
    for (const item of path.items) keep(item, path);
  }
  // Keyed in the graph's node order, then the items: a listing reads like the graph.
  const ordered = new Map<string, GraphPath>();
  for (const name of graph.nodes.keys()) {
    const path = shortest.get(name);
    if (path !== undefined) ordered.set(name, path);
  }
  for (const [key, path] of shortest) if (!ordered.has(key)) ordered.set(key, path);
  return ordered;
}
