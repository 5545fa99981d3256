import { END } from './end.js';
import { exitOf } from './subgraph.js';
import type { GraphDef, JoinPolicy, NodeDef, SubgraphDef } from './types.js';

/**
 * A run drawn over its graph, as plain data (the CLI computes it from a stored trace).
 *
 * @example
 * renderGraph(def, { run: { counts: { plan: 2, search: 2 }, path: trace.path, status: 'failed' } });
 */
export interface RunOverlay {
  /** Activations per node name; a node missing here counts its appearances in `path`. */
  readonly counts: Readonly<Record<string, number>>;
  /** Node names in the order they were visited, one per activation (`Trace.path`). */
  readonly path: readonly string[];
  /** Nodes where the run stopped: failed, waiting for a person, or still pending. */
  readonly stoppedAt?: readonly string[];
  /** The run's status, shown as the diagram's caption; `succeeded` also marks the way to END. */
  readonly status?: string;
}

/**
 * A graph's costs drawn over it, as plain data (the CLI computes it from the bound and the
 * recorded usage, docs/cost.md).
 *
 * @example
 * renderGraph(def, { cost: { notes: { plan: '≤ 3× · 9 calls' }, worst: ['plan', 'search'] } });
 */
export interface CostOverlay {
  /** A line under a node's name, by node name (a subgraph's nodes as `review/plan`). */
  readonly notes: Readonly<Record<string, string>>;
  /** The nodes of the worst case's path, its last one last: the links between them are drawn. */
  readonly worst?: readonly string[];
}

/**
 * Options of {@link renderGraph}.
 *
 * @example
 * renderGraph(def, { format: 'dot' });
 */
export interface RenderOptions {
  /** `mermaid` (default) for Markdown and GitHub, `dot` for Graphviz. */
  readonly format?: 'mermaid' | 'dot';
  /** A run to draw over the graph: visited and stopped nodes, the edges it took. */
  readonly run?: RunOverlay;
  /** Costs to note next to each node, and the worst case's path to draw. */
  readonly cost?: CostOverlay;
}

type LinkKind = 'edge' | 'route' | 'fan-out' | 'map' | 'join' | 'error';

interface Shape {
  readonly id: string;
  readonly label: string;
  /** A second line under the label: the node's costs. */
  readonly note?: string;
  readonly state: 'plain' | 'visited' | 'stopped';
  readonly terminus: boolean;
  /** The subgraphs the shape is drawn inside, outermost first, by path (`review`, `review/inner`). */
  readonly clusters: readonly string[];
}

interface Link {
  readonly from: string;
  readonly to: string;
  readonly kind: LinkKind;
  readonly label: string | undefined;
  taken: boolean;
  /** On the worst case's path (a cost overlay). */
  worst?: boolean;
}

// Ids never come from node names: any name stays a safe identifier in both formats, and no
// name can collide with the START and END markers.
const startId = '__start__';
const endId = '__end__';

/**
 * Draws a graph declaration as a Mermaid flowchart or a Graphviz digraph, in declaration order,
 * optionally with a run drawn over it. Reads only the plain-data {@link GraphDef}; an invalid
 * declaration still renders, nodes it names but never declares marked `undeclared`.
 *
 * @example
 * const text = renderGraph(claims.def); // "flowchart TD\n  __start__([\"START\"])\n ..."
 * const dot = renderGraph(claims.def, { format: 'dot', run: { counts, path, status } });
 */
export function renderGraph(def: GraphDef, options: RenderOptions = {}): string {
  const { shapes, links } = layout(def, options.run, options.cost);
  const caption =
    options.run?.status === undefined ? undefined : `${def.name}: ${options.run.status}`;
  return options.format === 'dot'
    ? dot(def.name, caption, shapes, links)
    : mermaid(caption, shapes, links, options.run !== undefined);
}

/** Nodes and links in output order, with the run's marks applied. */
function layout(
  def: GraphDef,
  run: RunOverlay | undefined,
  cost: CostOverlay | undefined,
): { shapes: Shape[]; links: Link[] } {
  const ids = new Map<string, string>();
  const named: { name: string; label: string; node: NodeDef | undefined; clusters: string[] }[] =
    [];
  const declare = (
    name: string,
    node: NodeDef | undefined,
    label = name,
    clusters: string[] = [],
  ) => {
    const id = `n${named.length}`;
    ids.set(name, id);
    named.push({ name, label, node, clusters });
    return id;
  };
  // A subgraph is drawn as a block holding its node (the entry that maps the input in), the
  // child's nodes under its path, and the END of the child, which the node's own links leave
  // from: the same nodes a run of it visits (`review`, `review/plan`, `review/__end__`).
  const declareAll = (d: GraphDef, prefix: string, clusters: string[]) => {
    const subgraphs = new Map((d.subgraphs ?? []).map((sub) => [sub.name, sub]));
    // The first declaration of a name wins, as in the validator; END is never a node.
    for (const node of d.nodes) {
      const name = typeof node.name === 'string' ? prefix + node.name : node.name;
      if (typeof node.name !== 'string' || node.name === '' || node.name === END || ids.has(name))
        continue;
      const sub = subgraphs.get(node.name);
      if (sub === undefined) {
        declare(name, node, node.name, clusters);
        continue;
      }
      const inner = [...clusters, name];
      declare(name, node, node.name, inner);
      declareAll(sub.graph, `${name}/`, inner);
      declare(exitOf(name), undefined, 'END', inner);
    }
  };
  declareAll(def, '', []);
  const idOf = (name: string) =>
    name === END ? endId : (ids.get(name) ?? declare(name, undefined));

  const links: Link[] = [];
  const start: Link | undefined =
    def.entry === null
      ? undefined
      : { from: startId, to: idOf(def.entry), kind: 'edge', label: undefined, taken: false };
  if (start) links.push(start);
  const joinOf = new Map<string, string>(); // join node -> the node that fans out to it
  // The links of one graph, its names under `prefix`; END is `end` inside a subgraph, and a
  // subgraph node's own links leave from the END of its child.
  const linkAll = (d: GraphDef, prefix: string, end: string) => {
    const subgraphs = new Map((d.subgraphs ?? []).map((sub) => [sub.name, sub]));
    const at = (name: string) => (name === END ? end : prefix + name);
    const out = (name: string) => (subgraphs.has(name) ? exitOf(prefix + name) : prefix + name);
    const link = (from: string, to: string, kind: LinkKind, label?: string) =>
      links.push({ from: idOf(from), to: idOf(to), kind, label, taken: false });
    const joins = new Set<string>();
    for (const fanOut of d.fanOuts) {
      joins.add(fanOut.join);
      if (!joinOf.has(at(fanOut.join))) joinOf.set(at(fanOut.join), at(fanOut.from));
    }
    for (const edge of d.edges) {
      if (joins.has(edge.to)) link(out(edge.from), at(edge.to), 'join', 'join');
      else link(out(edge.from), at(edge.to), 'edge');
    }
    for (const route of d.routes) {
      for (const target of listOf(route.targets))
        link(out(route.from), at(target), 'route', 'route');
    }
    for (const fanOut of d.fanOuts) {
      const from = out(fanOut.from);
      if (fanOut.kind === 'map') link(from, at(fanOut.branch), 'map', `map over ${fanOut.over}`);
      else
        for (const branch of listOf(fanOut.branches)) link(from, at(branch), 'fan-out', 'fan-out');
    }
    for (const node of d.nodes) {
      if (node?.onError !== undefined)
        link(prefix + node.name, at(node.onError), 'error', 'onError');
    }
    // A terminal node ends its path as if it had an edge to END: draw that edge unless it exists.
    const toEnd = new Set(d.edges.filter((e) => e.to === END).map((e) => e.from));
    for (const node of d.nodes) {
      if (node?.terminal === true && !toEnd.has(node.name)) link(out(node.name), at(END), 'edge');
    }
    for (const sub of subgraphs.values()) linkChild(sub, prefix, link, at);
  };
  const linkChild = (
    sub: SubgraphDef,
    prefix: string,
    link: (from: string, to: string, kind: LinkKind, label?: string) => void,
    parentAt: (name: string) => string,
  ) => {
    const name = prefix + sub.name;
    if (sub.graph.entry !== null) link(name, `${name}/${sub.graph.entry}`, 'edge');
    // A child node's parent goto is a route of it, out of the child's block into the parent.
    for (const node of sub.graph.nodes)
      for (const target of listOf(node?.parentGoto ?? []))
        link(`${name}/${node.name}`, parentAt(target), 'route', 'parent');
    linkAll(sub.graph, `${name}/`, exitOf(name));
  };
  linkAll(def, '', END);

  // Grouped by source in declaration order, so the text reads top-down like the graph; the
  // sort is stable, so one node's links keep the order above (edge, route, fan-out, onError).
  const rank = (id: string) => (id === startId ? -1 : Number(id.slice(1)));
  links.sort((a, b) => rank(a.from) - rank(b.from));

  const counts = new Map<string, number>();
  const stopped = new Set<string>();
  if (run) {
    const path = withSubgraphSteps(def, run.path);
    markTaken({ ...run, path }, ids, links, start, joinOf);
    for (const name of path) counts.set(name, (counts.get(name) ?? 0) + 1);
    for (const [name, count] of Object.entries(run.counts)) counts.set(name, count);
    for (const name of run.stoppedAt ?? []) stopped.add(name);
  }
  if (cost?.worst !== undefined) markWorst(cost.worst, ids, links, start);
  const shapes: Shape[] = start
    ? [{ id: startId, label: 'START', state: 'plain', terminus: true, clusters: [] }]
    : [];
  for (const [i, { name, label: text, node, clusters }] of named.entries()) {
    const count = counts.get(name) ?? 0;
    const state = stopped.has(name) ? 'stopped' : count > 0 ? 'visited' : 'plain';
    const exit = node === undefined && clusters.length > 0 && name === exitOf(clusters.at(-1)!);
    const markers = node === undefined ? (exit ? [] : ['undeclared']) : markersOf(node);
    const label = `${text}${count > 0 ? ` ×${count}` : ''}${markers.length > 0 ? ` (${markers.join(', ')})` : ''}`;
    const note = cost?.notes[name];
    shapes.push({
      id: `n${i}`,
      label,
      ...(note !== undefined && { note }),
      state,
      terminus: exit,
      clusters,
    });
  }
  if (links.some((l) => l.to === endId))
    shapes.push({ id: endId, label: 'END', state: 'plain', terminus: true, clusters: [] });
  return { shapes, links };
}

/**
 * A run's path with the steps that enter and leave subgraphs put back: they are applied inline,
 * so a trace has no entry of its own for them (`review` before `review/plan`, `review/__end__`
 * after the child's last node). Read from the names: a child's entry node opens its subgraph
 * again (a loop around it); a node outside it closes it.
 */
function withSubgraphSteps(def: GraphDef, path: readonly string[]): readonly string[] {
  const entries = new Map<string, string>(); // child entry node -> its subgraph's node
  const collect = (d: GraphDef, prefix: string) => {
    for (const sub of d.subgraphs ?? []) {
      const name = prefix + sub.name;
      if (sub.graph.entry !== null) entries.set(`${name}/${sub.graph.entry}`, name);
      collect(sub.graph, `${name}/`);
    }
  };
  collect(def, '');
  if (entries.size === 0) return path;
  const subgraphs = new Set(entries.values());
  const out: string[] = [];
  const open: string[] = [];
  const close = (keep: number) => {
    while (open.length > keep) out.push(exitOf(open.pop()!));
  };
  for (const name of path) {
    const within = [...subgraphs].filter((sub) => name.startsWith(`${sub}/`)).sort();
    let common = 0;
    while (common < open.length && open[common] === within[common]) common++;
    const reentered = entries.get(name);
    if (reentered !== undefined && open.at(-1) === reentered)
      common = Math.min(common, open.length - 1);
    close(common);
    for (const sub of within.slice(common)) {
      out.push(sub);
      open.push(sub);
    }
    out.push(name);
  }
  close(0);
  return out;
}

function markersOf(node: NodeDef): string[] {
  const markers: string[] = [];
  if (node.kind !== 'code') markers.push(String(node.kind));
  if (node.visits !== undefined) markers.push(`visits ≤ ${node.visits}`);
  if (node.join !== undefined) markers.push(`join: ${policyText(node.join.policy)}`);
  return markers;
}

function policyText(policy: JoinPolicy): string {
  return policy.kind === 'quorum' ? `quorum(${policy.k})` : String(policy.kind);
}

/**
 * Marks the links a run took, from its path alone: each visit came along a link from the most
 * recently visited node that has one into it. When that node has an onError link and another
 * link to the same target, the path cannot tell them apart and the other one is marked. A join
 * came from every branch node visited since its fan-out started. The links to END are taken
 * when the run succeeded, from the last node it visited.
 */
function markTaken(
  run: RunOverlay,
  ids: ReadonlyMap<string, string>,
  links: readonly Link[],
  start: Link | undefined,
  joinOf: ReadonlyMap<string, string>,
): void {
  const into = new Map<string, Link[]>();
  for (const l of links) {
    const list = into.get(l.to);
    if (list) list.push(l);
    else into.set(l.to, [l]);
  }
  const last = new Map<string, number>(); // node id -> position of its latest visit
  const at = (id: string) => last.get(id) ?? -1;
  let previous: string | undefined;
  for (const [position, name] of run.path.entries()) {
    const id = ids.get(name);
    if (id === undefined) continue; // a node this graph does not have: nothing to draw
    if (previous === undefined) {
      if (start && start.to === id) start.taken = true;
    } else {
      const candidates = (into.get(id) ?? []).filter((l) => l !== start);
      const fanFrom = joinOf.get(name);
      if (fanFrom !== undefined) {
        const since = at(ids.get(fanFrom) ?? '');
        for (const l of candidates) if (at(l.from) > since) l.taken = true;
      } else {
        const from = candidates.reduce((latest, l) => Math.max(latest, at(l.from)), -1);
        const came = candidates.filter((l) => from >= 0 && at(l.from) === from);
        const normal = came.filter((l) => l.kind !== 'error');
        for (const l of normal.length > 0 ? normal : came) l.taken = true;
      }
    }
    last.set(id, position);
    previous = id;
  }
  if (run.status === 'succeeded' && previous !== undefined) {
    for (const l of into.get(endId) ?? []) if (l.from === previous) l.taken = true;
  }
}

/**
 * Marks the worst case's path: the links between its nodes (its loops taken at their caps are
 * part of it), the start into it and its last node's way to END. Error links are alternatives a
 * worst case does not need, so they are left unmarked.
 */
function markWorst(
  worst: readonly string[],
  ids: ReadonlyMap<string, string>,
  links: readonly Link[],
  start: Link | undefined,
): void {
  const on = new Set(worst.flatMap((name) => ids.get(name) ?? []));
  const last = ids.get(worst.at(-1) ?? '');
  for (const l of links) {
    if (l.kind === 'error') continue;
    if (
      l === start
        ? on.has(l.to)
        : on.has(l.from) && (on.has(l.to) || (l.to === endId && l.from === last))
    )
      l.worst = true;
  }
}

/**
 * Walks the shapes in order, opening and closing the blocks of the subgraphs they are inside
 * (a subgraph's shapes are declared together, so each block opens once). Indentation depth 1
 * is the top level.
 */
function clustered(
  shapes: readonly Shape[],
  emit: {
    readonly open: (path: string, id: string, depth: number) => void;
    readonly shape: (shape: Shape, depth: number) => void;
    readonly close: (depth: number) => void;
  },
): void {
  const stack: string[] = [];
  let opened = 0;
  for (const s of shapes) {
    let common = 0;
    while (common < stack.length && stack[common] === s.clusters[common]) common++;
    while (stack.length > common) {
      stack.pop();
      emit.close(stack.length + 1);
    }
    for (const path of s.clusters.slice(common)) {
      emit.open(path, `sub${opened++}`, stack.length + 1);
      stack.push(path);
    }
    emit.shape(s, stack.length + 1);
  }
  while (stack.length > 0) {
    stack.pop();
    emit.close(stack.length + 1);
  }
}

// ---- Mermaid ----------------------------------------------------------------------------

const mermaidArrows: Readonly<Record<LinkKind, string>> = {
  edge: '-->',
  route: '-.->',
  error: '-.->',
  'fan-out': '==>',
  map: '==>',
  join: '==>',
};

function mermaid(
  caption: string | undefined,
  shapes: readonly Shape[],
  links: readonly Link[],
  overlay: boolean,
): string {
  // A caption is YAML front matter; a JSON string is a valid YAML scalar.
  const out = caption === undefined ? [] : ['---', `title: ${JSON.stringify(caption)}`, '---'];
  out.push('flowchart TD');
  clustered(shapes, {
    open: (path, id, depth) =>
      out.push(`${'  '.repeat(depth)}subgraph ${id}["${mermaidText(path)}"]`),
    shape: (s, depth) => {
      const note = s.note === undefined ? '' : `<br/>${mermaidText(s.note)}`;
      const text = `"${mermaidText(s.label)}${note}"`;
      out.push(`${'  '.repeat(depth)}${s.id}${s.terminus ? `([${text}])` : `[${text}]`}`);
    },
    close: (depth) => out.push(`${'  '.repeat(depth)}end`),
  });
  for (const l of links) {
    const label = l.label === undefined ? '' : `|"${mermaidText(l.label)}"|`;
    out.push(`  ${l.from} ${mermaidArrows[l.kind]}${label} ${l.to}`);
  }
  if (overlay) {
    out.push('  classDef visited fill:#dcfce7,stroke:#16a34a');
    out.push('  classDef stopped fill:#fee2e2,stroke:#dc2626,stroke-width:2px');
    for (const state of ['visited', 'stopped'] as const) {
      const ids = shapes.filter((s) => s.state === state).map((s) => s.id);
      if (ids.length > 0) out.push(`  class ${ids.join(',')} ${state}`);
    }
    // linkStyle counts links in the order they appear, which is the order of `links`.
    const taken = links.flatMap((l, i) => (l.taken ? [i] : []));
    if (taken.length > 0)
      out.push(`  linkStyle ${taken.join(',')} stroke:#16a34a,stroke-width:3px`);
  }
  const worst = links.flatMap((l, i) => (l.worst && !l.taken ? [i] : []));
  if (worst.length > 0)
    out.push(`  linkStyle ${worst.join(',')} stroke:#c2410c,stroke-width:3px,stroke-dasharray:6 4`);
  return `${out.join('\n')}\n`;
}

/** Text safe inside a Mermaid quoted label: Mermaid's `#code;` entities for what would break it. */
function mermaidText(text: string): string {
  return text.replace(/["#&<>`\p{Cc}]/gu, (c) => `#${c.codePointAt(0)};`);
}

// ---- Graphviz DOT ------------------------------------------------------------------------

const dotStyles: Readonly<Record<LinkKind, string[]>> = {
  edge: [],
  route: ['style=dashed'],
  error: ['style=dotted', 'color="#b91c1c"'],
  'fan-out': ['style=bold'],
  map: ['style=bold'],
  join: ['style=bold'],
};

function dot(
  name: string,
  caption: string | undefined,
  shapes: readonly Shape[],
  links: readonly Link[],
): string {
  const out = [`digraph ${dotText(name)} {`, '  rankdir=TB;'];
  if (caption !== undefined) out.push(`  label=${dotText(caption)};`, '  labelloc=t;');
  out.push('  node [shape=box, style=rounded];');
  clustered(shapes, {
    open: (path, id, depth) => {
      const pad = '  '.repeat(depth);
      out.push(`${pad}subgraph ${dotText(`cluster_${id}`)} {`, `${pad}  label=${dotText(path)};`);
    },
    shape: (s, depth) => {
      const attrs = [`label=${dotText(s.note === undefined ? s.label : `${s.label}\n${s.note}`)}`];
      if (s.terminus) attrs.push('shape=oval');
      if (s.state === 'visited')
        attrs.push('style="rounded,filled"', 'fillcolor="#dcfce7"', 'color="#16a34a"');
      if (s.state === 'stopped')
        attrs.push(
          'style="rounded,filled"',
          'fillcolor="#fee2e2"',
          'color="#dc2626"',
          'penwidth=2',
        );
      out.push(`${'  '.repeat(depth)}${dotText(s.id)} [${attrs.join(', ')}];`);
    },
    close: (depth) => out.push(`${'  '.repeat(depth)}}`),
  });
  for (const l of links) {
    const attrs = l.label === undefined ? [] : [`label=${dotText(l.label)}`];
    attrs.push(
      ...dotStyles[l.kind].filter((a) => !((l.taken || l.worst) && a.startsWith('color='))),
    );
    if (l.taken) attrs.push('color="#16a34a"', 'penwidth=3');
    else if (l.worst) attrs.push('color="#c2410c"', 'penwidth=3');
    const suffix = attrs.length > 0 ? ` [${attrs.join(', ')}]` : '';
    out.push(`  ${dotText(l.from)} -> ${dotText(l.to)}${suffix};`);
  }
  out.push('}');
  return `${out.join('\n')}\n`;
}

/**
 * A DOT quoted string: backslashes and quotes escaped, line breaks as `\n`, and `&` as `&amp;`
 * since Graphviz reads entities such as `&lt;` in any label.
 */
function dotText(text: string): string {
  const escaped = text
    .replace(/[\\"]/g, (c) => `\\${c}`)
    .replace(/&/g, '&amp;')
    .replace(/\r?\n/g, '\\n')
    .replace(/\p{Cc}/gu, ' ');
  return `"${escaped}"`;
}

// An invalid declaration may hold a non-list where a list belongs; the validator reports it.
function listOf(list: readonly string[]): readonly string[] {
  return Array.isArray(list) ? list : [];
}
