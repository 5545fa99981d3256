import type { CompiledGraph, RuntimeNode } from '../../graph/compiled.js';
import { declaredName } from '../../graph/subgraph.js';

/** What a coverage item is about: each kind is one decision a run can take at a node. */
export type CoverageKind = 'route' | 'error' | 'join' | 'wait' | 'cap';

/** The kinds in the order a report lists them. */
export const coverageKinds: readonly CoverageKind[] = ['route', 'error', 'join', 'wait', 'cap'];

/**
 * One thing a graph declares that a run can exercise: a router's target (`route`), an `onError`
 * edge (`error`), a join's outcome (`join`, `merged` or `failed`), a person's wait answered
 * (`wait`), a visit cap reached (`cap`). `id` is stable and readable: `route verify -> approve`.
 *
 * @example
 * { id: 'error reproduce -> escalate', kind: 'error', node: 'reproduce', to: 'escalate' }
 */
export interface CoverageItem {
  readonly id: string;
  readonly kind: CoverageKind;
  /** The node as declared (a subgraph's nodes as `review/plan`). */
  readonly node: string;
  /** A route's target or an error edge's target (`__end__` for END). */
  readonly to?: string;
  /** A join's outcome. */
  readonly outcome?: 'merged' | 'failed';
}

/**
 * Every coverable item of a compiled graph, in node order, a subgraph's nodes under its name.
 * Read from the flat node table, so a subgraph's routes are items of the graph that runs it.
 *
 * @example
 * coverageItems(triage).filter((i) => i.kind === 'route').map((i) => i.id);
 */
export function coverageItems(graph: CompiledGraph): readonly CoverageItem[] {
  const items: CoverageItem[] = [];
  const seen = new Set<string>();
  const add = (item: CoverageItem) => {
    if (seen.has(item.id)) return;
    seen.add(item.id);
    items.push(item);
  };
  for (const node of graph.nodes.values()) {
    const name = declaredName(node.def.name);
    if (node.router !== undefined)
      for (const to of node.router.targets) add(routeItem(name, declaredName(to)));
    // A subgraph's entry and exit both carry the node's onError: it is one declared edge.
    if (node.def.onError !== undefined) add(errorItem(name, declaredName(node.def.onError)));
    if (node.join !== undefined) for (const outcome of joinOutcomes) add(joinItem(name, outcome));
    if (node.wait !== undefined) add(waitItem(name));
    if (capped(node)) add(capItem(name));
  }
  return items;
}

const joinOutcomes = ['merged', 'failed'] as const;

function capped(node: RuntimeNode): boolean {
  return node.inline === undefined && node.cap !== Number.POSITIVE_INFINITY;
}

export const routeItem = (node: string, to: string): CoverageItem => ({
  id: `route ${node} -> ${to}`,
  kind: 'route',
  node,
  to,
});

export const errorItem = (node: string, to: string): CoverageItem => ({
  id: `error ${node} -> ${to}`,
  kind: 'error',
  node,
  to,
});

export const joinItem = (node: string, outcome: 'merged' | 'failed'): CoverageItem => ({
  id: `join ${node} ${outcome}`,
  kind: 'join',
  node,
  outcome,
});

export const waitItem = (node: string): CoverageItem => ({
  id: `wait ${node}`,
  kind: 'wait',
  node,
});

export const capItem = (node: string): CoverageItem => ({ id: `cap ${node}`, kind: 'cap', node });
