import dagre from '@dagrejs/dagre';
import { expandSubgraphs } from './subgraphs.js';
import type { GraphDef } from './types.js';

export type EdgeKind = 'edge' | 'route' | 'fan-out' | 'map' | 'error';

/** A node placed by the layout: top-left corner, relative to its group when it has one. */
export interface PlacedNode {
  readonly id: string;
  readonly label: string;
  readonly kind: string;
  /** A group stands for a prefix of node names (`review/`): a subgraph. */
  readonly group: boolean;
  readonly parent?: string;
  readonly x: number;
  readonly y: number;
  readonly width: number;
  readonly height: number;
}

export interface PlacedEdge {
  readonly id: string;
  readonly from: string;
  readonly to: string;
  readonly kind: EdgeKind;
  readonly label?: string;
}

export interface Layout {
  readonly nodes: PlacedNode[];
  readonly edges: PlacedEdge[];
}

const nodeWidth = 168;
const nodeHeight = 54;
// With up to three lines of costs under the name (the page's "cost" view).
const tallNodeHeight = 92;

/** The groups a node name sits in, outermost first: `a/b/c` is in `a` and `a/b`. */
export function groupsOf(name: string): string[] {
  const parts = name.split('/');
  return parts.slice(0, -1).map((_, i) => parts.slice(0, i + 1).join('/'));
}

/**
 * Every declared way from one node to another, once per pair: static edges, a router's declared
 * targets, fan-outs to their branches, and `onError` targets.
 */
export function declaredEdges(def: GraphDef): PlacedEdge[] {
  const edges = new Map<string, PlacedEdge>();
  const add = (from: string, to: string, kind: EdgeKind, label?: string) => {
    const id = `${from}->${to}`;
    if (!edges.has(id))
      edges.set(id, { id, from, to, kind, ...(label !== undefined && { label }) });
  };
  for (const e of def.edges) add(e.from, e.to, 'edge');
  for (const r of def.routes) for (const t of r.targets) add(r.from, t, 'route');
  for (const f of def.fanOuts) {
    if (f.kind === 'fixed') for (const b of f.branches) add(f.from, b, 'fan-out', 'fan-out');
    else add(f.from, f.branch, 'map', `map over ${f.over}`);
  }
  for (const n of def.nodes)
    if (n.onError !== undefined) add(n.name, n.onError, 'error', 'on error');
  return [...edges.values()];
}

/**
 * Lays the declared graph out top to bottom with dagre, nodes nested in a group per name prefix
 * (`a/b` sits in group `a`), ready for subgraphs. `extra` are edges the run took that the
 * declaration does not draw (a join reached from a branch): they are laid out too. `tall` makes
 * room for the lines of costs in each node.
 *
 * @example
 * const { nodes, edges } = layoutGraph(def);
 */
export function layoutGraph(
  declared: GraphDef,
  extra: readonly PlacedEdge[] = [],
  options: { readonly tall?: boolean } = {},
): Layout {
  const height = options.tall === true ? tallNodeHeight : nodeHeight;
  const def = expandSubgraphs(declared);
  const g = new dagre.graphlib.Graph({ compound: true, multigraph: false });
  g.setGraph({ rankdir: 'TB', nodesep: 28, ranksep: 44, marginx: 8, marginy: 8 });
  g.setDefaultEdgeLabel(() => ({}));
  const groups = new Set<string>();
  for (const n of def.nodes) for (const p of groupsOf(n.name)) groups.add(p);
  for (const p of groups) g.setNode(p, { label: p, paddingTop: 28 });
  for (const n of def.nodes) g.setNode(n.name, { width: nodeWidth, height });
  for (const p of groups) {
    const outer = groupsOf(p).at(-1);
    if (outer !== undefined) g.setParent(p, outer);
  }
  for (const n of def.nodes) {
    const inner = groupsOf(n.name).at(-1);
    if (inner !== undefined) g.setParent(n.name, inner);
  }
  const edges = [...declaredEdges(def)];
  const known = new Set(edges.map((e) => e.id));
  for (const e of extra) if (!known.has(e.id)) edges.push(e);
  // An edge to END (or to a node the drawing lacks) has nothing to point at.
  const drawn = edges.filter((e) => g.hasNode(e.from) && g.hasNode(e.to) && !groups.has(e.to));
  for (const e of drawn) g.setEdge(e.from, e.to);
  dagre.layout(g);

  const box = (id: string) => {
    const n = g.node(id) as { x: number; y: number; width: number; height: number };
    return { left: n.x - n.width / 2, top: n.y - n.height / 2, width: n.width, height: n.height };
  };
  const placed: PlacedNode[] = [];
  // Groups first, outer before inner: the drawing needs a parent before its children.
  const ordered = [...groups].sort((a, b) => a.split('/').length - b.split('/').length);
  for (const id of [...ordered, ...def.nodes.map((n) => n.name)]) {
    const isGroup = groups.has(id);
    const parent = groupsOf(id).at(-1);
    const b = box(id);
    const p = parent === undefined ? undefined : box(parent);
    const kind = isGroup ? 'group' : (def.nodes.find((n) => n.name === id)?.kind ?? 'code');
    placed.push({
      id,
      label: id.slice(parent === undefined ? 0 : parent.length + 1),
      kind,
      group: isGroup,
      ...(parent !== undefined && { parent }),
      x: b.left - (p?.left ?? 0),
      y: b.top - (p?.top ?? 0),
      width: b.width,
      height: b.height,
    });
  }
  return { nodes: placed, edges: drawn };
}
