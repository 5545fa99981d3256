import { END } from '../graph/end.js';
import type { FanOutDef, GraphDef, NodeDef } from '../graph/types.js';
import { parentGotos } from '../graph/validate-subgraphs.js';

/**
 * The graph as the cost bound walks it: each node's successors (static edges, router targets,
 * a subgraph's parent gotos, its `onError` node) with a fan-out replaced by one step from the fanning-out node to its join,
 * since one fan-out activation opens one barrier and the join runs once for it. Branch nodes are
 * reached only through their fan-out.
 */
export interface Shape {
  readonly nodes: ReadonlyMap<string, NodeDef>;
  readonly next: ReadonlyMap<string, readonly string[]>;
  readonly fanOuts: ReadonlyMap<string, FanOutDef>;
}

/** The {@link Shape} of a graph definition. */
export function shapeOf(def: GraphDef): Shape {
  const nodes = new Map(def.nodes.map((n) => [n.name, n]));
  const fanOuts = new Map(def.fanOuts.map((f) => [f.from, f]));
  const next = new Map<string, string[]>();
  const add = (from: string, to: string | undefined) => {
    if (to === undefined || to === END || !nodes.has(to)) return;
    const list = next.get(from) ?? [];
    if (!list.includes(to)) list.push(to);
    next.set(from, list);
  };
  for (const n of def.nodes) {
    next.set(n.name, []);
    add(n.name, n.onError);
  }
  for (const e of def.edges) if (!fanOuts.has(e.from)) add(e.from, e.to);
  for (const r of def.routes) for (const t of r.targets) add(r.from, t);
  // A child's parent goto goes on from its subgraph's node, as a route of it does.
  for (const sent of parentGotos(def)) add(sent.subgraph, sent.target);
  for (const f of def.fanOuts) add(f.from, f.join);
  return { nodes, next, fanOuts };
}

/**
 * How many times each node of one region can run for one token that enters it at `entry` (the
 * run itself, one branch of a fan-out) and leaves at `stop` (the branch's join, not counted).
 * One token passes a node that is on no cycle at most once; inside a cycle, a capped node runs
 * at most its cap, and an uncapped one (the validator puts a cap on every cycle) at most as
 * often as the nodes before it hand it the token. Values are upper bounds; Infinity only for a
 * cycle with no cap, which a compiled graph cannot have.
 */
export function regionCounts(shape: Shape, entry: string, stop?: string): Map<string, number> {
  const inRegion = reachable(shape, entry, stop);
  const succ = (n: string) => (shape.next.get(n) ?? []).filter((m) => inRegion.has(m));
  const components = stronglyConnected([...inRegion], succ);
  const counts = new Map<string, number>();
  for (const component of components) {
    const set = new Set(component);
    const single = component.length === 1 && !succ(component[0]!).includes(component[0]!);
    if (single) {
      counts.set(component[0]!, 1);
      continue;
    }
    loopCounts(shape, component, set, entry, succ, inRegion, counts);
  }
  return counts;
}

/** Counts of one cycle's nodes: caps first, then the uncapped nodes in their (acyclic) order. */
function loopCounts(
  shape: Shape,
  component: readonly string[],
  set: ReadonlySet<string>,
  entry: string,
  succ: (n: string) => string[],
  inRegion: ReadonlySet<string>,
  counts: Map<string, number>,
): void {
  const cap = (n: string) => shape.nodes.get(n)?.visits;
  const preds = new Map<string, string[]>(component.map((n) => [n, []]));
  const fromOutside = new Set<string>();
  if (set.has(entry)) fromOutside.add(entry);
  for (const p of inRegion) {
    for (const m of succ(p)) {
      if (!set.has(m)) continue;
      if (set.has(p)) preds.get(m)!.push(p);
      else fromOutside.add(m);
    }
  }
  const uncapped = component.filter((n) => cap(n) === undefined);
  const order = topological(uncapped, (n) => succ(n).filter((m) => cap(m) === undefined));
  for (const n of component) counts.set(n, cap(n) ?? Infinity);
  const inflow = (n: string) =>
    (fromOutside.has(n) ? 1 : 0) + preds.get(n)!.reduce((sum, p) => sum + counts.get(p)!, 0);
  // Starting from caps (an upper bound) and applying "at most the inflow" keeps an upper bound
  // and tightens it: a cap larger than what can reach the node comes down to the reach.
  for (let round = 0; round < 3; round++) {
    if (order !== undefined) for (const n of order) counts.set(n, inflow(n));
    for (const n of component) {
      const c = cap(n);
      if (c !== undefined) counts.set(n, Math.min(c, inflow(n)));
    }
  }
}

function reachable(shape: Shape, entry: string, stop: string | undefined): Set<string> {
  const seen = new Set<string>();
  const todo = [entry];
  while (todo.length > 0) {
    const n = todo.pop()!;
    if (n === stop || seen.has(n) || !shape.nodes.has(n)) continue;
    seen.add(n);
    todo.push(...(shape.next.get(n) ?? []));
  }
  return seen;
}

/** Tarjan's components, in topological order (a component before those it leads to). */
export function stronglyConnected(
  nodes: readonly string[],
  succ: (n: string) => readonly string[],
): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const out: string[][] = [];
  let counter = 0;
  for (const root of nodes) {
    if (index.has(root)) continue;
    const frames: { node: string; edge: number }[] = [{ node: root, edge: 0 }];
    index.set(root, counter);
    low.set(root, counter++);
    stack.push(root);
    onStack.add(root);
    while (frames.length > 0) {
      const frame = frames[frames.length - 1]!;
      const list = succ(frame.node);
      if (frame.edge < list.length) {
        const w = list[frame.edge++]!;
        if (!index.has(w)) {
          index.set(w, counter);
          low.set(w, counter++);
          stack.push(w);
          onStack.add(w);
          frames.push({ node: w, edge: 0 });
        } else if (onStack.has(w)) {
          low.set(frame.node, Math.min(low.get(frame.node)!, index.get(w)!));
        }
        continue;
      }
      frames.pop();
      const parent = frames[frames.length - 1];
      if (parent) low.set(parent.node, Math.min(low.get(parent.node)!, low.get(frame.node)!));
      if (low.get(frame.node) !== index.get(frame.node)) continue;
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== frame.node);
      out.push(component);
    }
  }
  // Tarjan emits a component after every component it leads to.
  return out.reverse();
}

function topological(
  nodes: readonly string[],
  succ: (n: string) => readonly string[],
): string[] | undefined {
  const components = stronglyConnected(nodes, (n) => succ(n).filter((m) => nodes.includes(m)));
  if (components.some((c) => c.length > 1)) return undefined;
  return components.map((c) => c[0]!);
}
