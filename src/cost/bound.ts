import type { z } from 'zod';
import type { CompiledGraph } from '../graph/compiled.js';
import type { FanOutDef, GraphDef } from '../graph/types.js';
import {
  type Amounts,
  metrics,
  perActivation,
  plus,
  scaled,
  times,
  type Unbounded,
  zero,
} from './amounts.js';
import { regionCounts, type Shape, shapeOf, stronglyConnected } from './regions.js';

/** One node's worst case in a run, with the amounts it can spend. */
export interface NodeBound extends Amounts {
  readonly node: string;
}

/** One step of the worst path: a node and how many times the path runs it. */
export interface PathStep {
  readonly node: string;
  readonly activations: number;
}

/**
 * The worst case of a run, computed from the graph's declaration before anything runs.
 * `total` is the most one run can spend (the most expensive path, with its loops at their caps,
 * its retries spent and its maps at their widest); `nodes` is each node's own worst case, which
 * may add up to more than `total` when alternatives exclude each other (a router picks one).
 */
export interface Bound {
  readonly graph: string;
  readonly total: Amounts;
  readonly nodes: readonly NodeBound[];
  /** The path that reaches `total` in the costliest metric that has a bound (cost, tokens, executions). */
  readonly path: readonly PathStep[];
  /** What has no bound, and why: never guessed. */
  readonly unbounded: readonly Unbounded[];
}

/** Where the bound finds a map's list schema when the map declares no `maxItems`. */
type Schemas = (node: string, field: string) => z.ZodType | undefined;

/**
 * The worst case of a run of `graph`: node executions, model calls, tokens in and out and cost,
 * in total, per node, and the path that reaches it, from visit caps, retry policies, map bounds
 * (`maxItems`, else the list field's `.max()`), fan-out widths, subgraphs and the nodes' spend
 * limits. What it cannot count is listed in `unbounded` with the reason (docs/cost.md).
 *
 * @example
 * const b = boundOf(changelogPost);
 * b.total.modelCalls; // 36 + ...
 * b.unbounded;        // [] when every model node declares maxTokens and a price
 */
export function boundOf(graph: CompiledGraph | GraphDef): Bound {
  const compiled = 'def' in graph ? graph : undefined;
  const def = compiled?.def ?? (graph as GraphDef);
  const schemas: Schemas = (node, field) =>
    compiled?.nodes.get(node)?.scope?.fieldSchemas.get(field) ?? compiled?.fieldSchemas.get(field);
  const unbounded: Unbounded[] = [];
  const counts = new Map<string, number>();
  const analysis = analyse(def, '', schemas, unbounded, counts, 1);
  const total = analysis.total;
  const primary = (['costUsd', 'tokens', 'attempts'] as const).find((m) => total[m] < Infinity);
  const nodes = [...counts].map(([node, n]) => ({ node, ...analysis.unit(node, n) }));
  return {
    graph: def.name,
    total,
    nodes,
    path: analysis.path(primary ?? 'activations'),
    unbounded: dedupe(unbounded),
  };
}

interface Analysis {
  readonly total: Amounts;
  unit(node: string, activations: number): Amounts;
  path(metric: keyof Amounts): PathStep[];
}

/**
 * One graph (a run's, or a subgraph's per entry): per-node counts are added into `counts`
 * (times `scale`, the entries of this graph), under `prefix` for a child's nodes.
 */
function analyse(
  def: GraphDef,
  prefix: string,
  schemas: Schemas,
  unbounded: Unbounded[],
  counts: Map<string, number>,
  scale: number,
): Analysis {
  const shape = shapeOf(def);
  const own = new Map<string, Amounts>();
  for (const n of def.nodes) {
    const named = { ...n, name: prefix + n.name };
    // A subgraph's node only hands its child the state: it runs no body of its own.
    own.set(
      n.name,
      n.kind === 'subgraph' ? { ...zero, activations: 1 } : perActivation(named, unbounded),
    );
  }
  const children = new Map<string, Amounts>();
  for (const sub of def.subgraphs ?? []) {
    const child = analyse(sub.graph, `${prefix}${sub.name}/`, schemas, unbounded, new Map(), 1);
    children.set(sub.name, child.total);
  }
  const widths = new Map<string, number>();
  for (const f of def.fanOuts) widths.set(f.from, widthOf(f, prefix, schemas, unbounded));

  // Per-activation amounts of a node with what it opens: a fan-out's branches, a child graph.
  const memo = new Map<string, Amounts>();
  const regionTotal = (entry: string, stop: string | undefined): Amounts => {
    const key = `${entry}\u0000${stop ?? ''}`;
    const known = memo.get(key);
    if (known) return known;
    memo.set(key, zero); // a fan-out reached again from inside itself: cut, never infinite
    const region = regionCounts(shape, entry, stop);
    const value = longest(shape, region, entry, weightOf).best.get(entry) ?? zero;
    memo.set(key, value);
    return value;
  };
  const inner = (node: string): Amounts => {
    let amounts = own.get(node) ?? zero;
    const f = shape.fanOuts.get(node);
    if (f) {
      const branches = f.kind === 'fixed' ? f.branches : [f.branch];
      const width = f.kind === 'fixed' ? 1 : widths.get(node)!;
      for (const b of branches) amounts = plus(amounts, scaled(regionTotal(b, f.join), width));
    }
    const child = children.get(node);
    if (child) amounts = plus(amounts, child);
    return amounts;
  };
  const weightOf = (node: string, n: number) => scaled(inner(node), n);

  // Every node's own count in the run: its regions' counts times how often each region opens.
  const spread = (entry: string, stop: string | undefined, mult: number) => {
    for (const [node, n] of regionCounts(shape, entry, stop)) {
      const count = times(n, mult);
      counts.set(prefix + node, (counts.get(prefix + node) ?? 0) + times(count, scale));
      const f = shape.fanOuts.get(node);
      if (f === undefined) continue;
      const width = f.kind === 'fixed' ? 1 : widths.get(node)!;
      const branches = f.kind === 'fixed' ? f.branches : [f.branch];
      for (const b of branches) spread(b, f.join, times(count, width));
    }
  };
  const entry = def.entry;
  if (entry === null) return { total: zero, unit: () => zero, path: () => [] };
  spread(entry, undefined, 1);
  for (const sub of def.subgraphs ?? []) {
    const entries = counts.get(prefix + sub.name) ?? 0;
    analyse(sub.graph, `${prefix}${sub.name}/`, schemas, [], counts, entries);
  }
  const total = regionTotal(entry, undefined);
  return {
    total,
    unit: (node, n) => {
      const name = node.startsWith(prefix) ? node.slice(prefix.length) : node;
      const amounts = own.get(name);
      // A child's node: its own spend, found again from its graph.
      return amounts ? scaled(amounts, n) : scaled(childUnit(def, name, unbounded), n);
    },
    path: (metric) => {
      const region = regionCounts(shape, entry, undefined);
      return longest(shape, region, entry, weightOf).path(metric);
    },
  };
}

function childUnit(def: GraphDef, path: string, unbounded: Unbounded[]): Amounts {
  const slash = path.indexOf('/');
  const sub = def.subgraphs?.find((s) => s.name === path.slice(0, slash));
  if (!sub) return zero;
  const rest = path.slice(slash + 1);
  const node = sub.graph.nodes.find((n) => n.name === rest);
  return node
    ? node.kind === 'subgraph'
      ? { ...zero, activations: 1 }
      : perActivation(node, [...unbounded])
    : childUnit(sub.graph, rest, unbounded);
}

/**
 * The costliest way through one region, per metric: the components of the region in order, each
 * weighing what its nodes spend at their counts, and a token taking the heaviest way from one
 * to the next.
 */
function longest(
  shape: Shape,
  region: ReadonlyMap<string, number>,
  entry: string,
  weightOf: (node: string, n: number) => Amounts,
) {
  const names = [...region.keys()];
  const succ = (n: string) => (shape.next.get(n) ?? []).filter((m) => region.has(m));
  const components = stronglyConnected(names, succ);
  const componentOf = new Map<string, number>();
  components.forEach((c, i) => {
    for (const n of c) componentOf.set(n, i);
  });
  const weights = components.map((c) =>
    c.reduce((sum, n) => plus(sum, weightOf(n, region.get(n)!)), zero),
  );
  const nextOf = components.map((c) => {
    const out = new Set<number>();
    for (const n of c)
      for (const m of succ(n))
        if (componentOf.get(m) !== componentOf.get(n)) out.add(componentOf.get(m)!);
    return [...out];
  });
  const best: Amounts[] = [];
  for (let i = components.length - 1; i >= 0; i--) {
    const after = { ...zero } as Record<keyof Amounts, number>;
    for (const j of nextOf[i]!) for (const m of metrics) after[m] = Math.max(after[m], best[j]![m]);
    best[i] = plus(weights[i]!, after);
  }
  const start = componentOf.get(entry);
  return {
    best: new Map(start === undefined ? [] : [[entry, best[start]!]]),
    path(metric: keyof Amounts): PathStep[] {
      const steps: PathStep[] = [];
      let at = start;
      while (at !== undefined) {
        for (const n of orderFrom(components[at]!, succ))
          steps.push({ node: n, activations: region.get(n)! });
        const options = nextOf[at]!;
        at =
          options.length === 0
            ? undefined
            : options.reduce((a, b) => (best[b]![metric] > best[a]![metric] ? b : a));
      }
      return steps;
    },
  };
}

/** A cycle's nodes in the order a token walks them, from the one it enters at. */
function orderFrom(component: readonly string[], succ: (n: string) => string[]): string[] {
  if (component.length === 1) return [...component];
  const set = new Set(component);
  const first = component[component.length - 1]!;
  const seen = new Set<string>([first]);
  const queue = [first];
  for (let i = 0; i < queue.length; i++)
    for (const m of succ(queue[i]!)) {
      if (!set.has(m) || seen.has(m)) continue;
      seen.add(m);
      queue.push(m);
    }
  return queue;
}

/** How many branches a map can open: `maxItems`, else its list field's `.max()`, else no bound. */
function widthOf(f: FanOutDef, prefix: string, schemas: Schemas, unbounded: Unbounded[]): number {
  if (f.kind === 'fixed') return f.branches.length;
  if (f.maxItems !== undefined) return f.maxItems;
  const max = arrayMax(schemas(prefix + f.from, f.over));
  if (max !== undefined) return max;
  unbounded.push({
    node: prefix + f.from,
    what: 'activations',
    reason: `the map over "${f.over}" declares no maxItems and the field's schema has no .max()`,
  });
  return Infinity;
}

/** The most items a list schema allows (`.max(n)`, `.length(n)`), through optional/default. */
export function arrayMax(schema: z.ZodType | undefined): number | undefined {
  let s = schema as { _zod?: { def: Record<string, unknown> } } | undefined;
  for (let depth = 0; s?._zod && depth < 8; depth++) {
    const def = s._zod.def;
    if (def.type === 'array') {
      const checks = (def.checks ?? []) as { _zod: { def: Record<string, unknown> } }[];
      const maxima = checks
        .map((c) => c._zod.def)
        .filter((c) => c.check === 'max_length' || c.check === 'length_equals')
        .map((c) => (c.maximum ?? c.length) as number);
      return maxima.length > 0 ? Math.min(...maxima) : undefined;
    }
    s = def.innerType as typeof s;
  }
  return undefined;
}

function dedupe(list: readonly Unbounded[]): Unbounded[] {
  const seen = new Set<string>();
  return list.filter((u) => {
    const key = `${u.node}\u0000${u.what}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
