import type { FanOutDef, GraphDef } from './types.js';

const END = '__end__';

/**
 * The declared graph with each subgraph node opened up into the child's nodes, named by path
 * (`review/read`), as the runtime runs them and the trace names them: the layout then draws a
 * group per prefix. A way into the subgraph node leads to the child's entry; a way out of it
 * leaves from each child node that ends the child (an edge or route to END, or terminal).
 *
 * @example
 * expandSubgraphs(def).nodes.map((n) => n.name); // ['prep', 'review/read', 'review/score', ...]
 */
export function expandSubgraphs(def: GraphDef): GraphDef {
  const subs = def.subgraphs ?? [];
  if (subs.length === 0) return def;
  const opened = new Map(subs.map((s) => [s.name, prefixed(expandSubgraphs(s.graph), s.name)]));
  const into = (name: string) => opened.get(name)?.entry ?? name;
  const outOf = (name: string) => {
    const child = opened.get(name);
    return child === undefined ? [name] : endsOf(child);
  };
  const nodes: GraphDef['nodes'][number][] = def.nodes.filter((n) => !opened.has(n.name));
  const edges: GraphDef['edges'][number][] = def.edges.flatMap((e) =>
    outOf(e.from).map((from) => ({ from, to: into(e.to) })),
  );
  const routes: GraphDef['routes'][number][] = def.routes.flatMap((r) =>
    outOf(r.from).map((from) => ({ from, targets: r.targets.map(into) })),
  );
  const fanOuts = def.fanOuts.flatMap((f): FanOutDef[] =>
    outOf(f.from).map((from) =>
      f.kind === 'fixed'
        ? { ...f, from, branches: f.branches.map(into), join: into(f.join) }
        : { ...f, from, branch: into(f.branch), join: into(f.join) },
    ),
  );
  for (const child of opened.values()) {
    nodes.push(...child.nodes);
    edges.push(...child.edges.filter((e) => e.to !== END));
    routes.push(...child.routes);
    fanOuts.push(...child.fanOuts);
  }
  return {
    ...def,
    entry: def.entry === null ? null : into(def.entry),
    nodes,
    edges,
    routes,
    fanOuts,
  };
}

/** A child graph's declaration with every node named under `prefix/`; END stays END. */
function prefixed(def: GraphDef, prefix: string): GraphDef & { entry: string | null } {
  const p = (name: string) => (name === END ? END : `${prefix}/${name}`);
  return {
    ...def,
    entry: def.entry === null ? null : p(def.entry),
    nodes: def.nodes.map((n) => ({
      ...n,
      name: p(n.name),
      ...(n.onError !== undefined && { onError: p(n.onError) }),
    })),
    edges: def.edges.map((e) => ({ from: p(e.from), to: p(e.to) })),
    routes: def.routes.map((r) => ({ from: p(r.from), targets: r.targets.map(p) })),
    fanOuts: def.fanOuts.map((f) =>
      f.kind === 'fixed'
        ? { ...f, from: p(f.from), branches: f.branches.map(p), join: p(f.join) }
        : { ...f, from: p(f.from), branch: p(f.branch), join: p(f.join) },
    ),
    subgraphs: [],
  };
}

/** The nodes a graph ends at: an edge or a route to END, or declared terminal. */
function endsOf(def: GraphDef): string[] {
  const ends = new Set<string>();
  for (const e of def.edges) if (e.to === END) ends.add(e.from);
  for (const r of def.routes) if (r.targets.includes(END)) ends.add(r.from);
  for (const n of def.nodes) if (n.terminal === true) ends.add(n.name);
  return [...ends];
}
