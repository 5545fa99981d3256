import { WaymarkError } from '../../error/waymark-error.js';
import type { CompiledGraph } from '../../graph/compiled.js';
import { END } from '../../graph/end.js';
import { Spelling } from '../../graph/spelling.js';
import type { Snapshot } from '../core/snapshot.js';
import { isMovable } from '../core/step.js';

/** Which operation asks: `resume(..., { goto })` or `patchState(..., { asNode })`. */
export type MoveOption = 'goto' | 'asNode';

/**
 * Refuses, before anything is recorded, a node the run cannot legally be moved to: one the graph
 * does not have (with a did-you-mean), one reached only inside a fan-out's branch or a
 * subgraph's child (its activation would need a branch or a scope the run does not have), a
 * join (reached through its fan-out), or any node while a fan-out of the run is open.
 * @throws WaymarkError `GOTO_INVALID`.
 *
 * @example
 * checkMoveTarget(graph, snapshot, 'draft', 'goto');
 */
export function checkMoveTarget(
  graph: CompiledGraph,
  snapshot: Snapshot,
  name: unknown,
  option: MoveOption,
): string {
  const legal = mainPath(graph);
  const refuse = (why: string, suggestion?: string) =>
    new WaymarkError(
      'GOTO_INVALID',
      `\`${option}: ${JSON.stringify(name)}\` on run "${snapshot.runId}": ${why}`,
      {
        retryable: false,
        details: { option, node: name, ...(suggestion !== undefined && { suggestion }) },
      },
    );
  if (typeof name !== 'string' || !graph.nodes.has(name) || isInternal(name)) {
    const meant = typeof name === 'string' ? new Spelling([...legal]).suggest(name) : undefined;
    const guess = meant === undefined ? '' : ` (did you mean "${meant}"?)`;
    throw refuse(`graph "${graph.name}" has no such node${guess}`, meant);
  }
  if (!isMovable(snapshot)) {
    throw refuse(
      snapshot.status === 'succeeded' || snapshot.status === 'cancelled'
        ? `the run ${snapshot.status}`
        : 'a fan-out of it is open (its branches and its join hold the run)',
    );
  }
  if (graph.nodes.get(name)!.join !== undefined)
    throw refuse(`"${name}" is a join: it is reached through its fan-out, not moved to`);
  if (!legal.has(name)) {
    const where = name.includes('/')
      ? 'inside a subgraph (move to the subgraph node instead)'
      : 'only inside the branches of a fan-out';
    throw refuse(`"${name}" runs ${where}`);
  }
  return name;
}

/** A subgraph's child nodes and its exit: reached only inside the child's scope. */
function isInternal(name: string): boolean {
  return name.includes('/') || name === END;
}

const paths = new WeakMap<CompiledGraph, ReadonlySet<string>>();

function subgraphNamed(graph: CompiledGraph, name: string) {
  return graph.def.subgraphs?.find((s) => s.name === name);
}

/**
 * The nodes of the graph's own path: reachable from its entry through edges, routes and onError
 * routes, a fan-out passed over to its join; neither a branch's nodes nor a child's.
 */
function mainPath(graph: CompiledGraph): ReadonlySet<string> {
  const known = paths.get(graph);
  if (known !== undefined) return known;
  const seen = new Set<string>();
  const todo = [graph.entry];
  for (let name = todo.pop(); name !== undefined; name = todo.pop()) {
    if (seen.has(name)) continue;
    const node = graph.nodes.get(name);
    if (node === undefined) continue;
    seen.add(name);
    // A subgraph node goes on from its exit, which holds its edge, router or fan-out.
    const leaving = node.inline?.scope === 'enter' ? graph.nodes.get(`${name}/__end__`) : node;
    if (leaving === undefined) continue;
    const next: (string | undefined)[] = [leaving.next, leaving.def.onError];
    if (leaving.router !== undefined) next.push(...leaving.router.targets);
    if (leaving.fanOut !== undefined) next.push(leaving.fanOut.join);
    // A child's parent gotos are routes of its subgraph node (they go on from its exit too).
    const sub = node.inline?.scope === 'enter' ? subgraphNamed(graph, name) : undefined;
    for (const child of sub?.graph.nodes ?? []) next.push(...(child.parentGoto ?? []));
    for (const n of next) if (n !== undefined && n !== END && !isInternal(n)) todo.push(n);
  }
  paths.set(graph, seen);
  return seen;
}
