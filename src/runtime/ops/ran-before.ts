import type { CompiledGraph } from '../../graph/compiled.js';
import type { Store } from '../../store/store.js';
import { loadTrace } from './history.js';

/**
 * What a move (`goto`, `asNode`) records of the run's past: for each node that runs at most once
 * in the graph's shape (its visits are not counted) and ran outside any fan-out, the highest
 * activation number it had (`draft: 1`). The move counts them, so a node run again after it gets
 * a new activation id (`draft:2`): new effect keys, never a second completion of `draft:1`.
 *
 * @example
 * const ran = await ranBefore(store, graph, runId); // { draft: 1, check: 1 }
 */
export async function ranBefore(
  store: Store,
  graph: CompiledGraph,
  runId: string,
): Promise<Record<string, number>> {
  const ran: Record<string, number> = {};
  for (const { node, activation } of (await loadTrace(store, runId)).entries) {
    if (activation.includes('[') || graph.nodes.get(node)?.repeats !== false) continue;
    const n = Number(activation.slice(activation.lastIndexOf(':') + 1));
    if (Number.isInteger(n) && n > (ran[node] ?? 0)) ran[node] = n;
  }
  return ran;
}
