import { WaymarkError } from '../../error/waymark-error.js';
import type { CompiledGraph } from '../../graph/compiled.js';
import type { MemoStore } from '../../store/store.js';

/**
 * Forgets the cached outputs of a graph's cached nodes (LangGraph.js: `clearCache`), or of one
 * of them: the next activation of each runs again. Resolves with how many outputs it forgot.
 * @throws WaymarkError `OPTIONS_INVALID` for a node the graph does not have, or one without
 *   `cache`.
 *
 * @example
 * await clearCache(store, graph, 'lookup'); // 3
 */
export async function clearCache<S, I>(
  store: MemoStore,
  graph: CompiledGraph<S, I>,
  node?: string,
): Promise<number> {
  const g = graph as CompiledGraph;
  if (node !== undefined) {
    const found = g.nodes.get(node);
    if (found === undefined || found.def.cache === undefined) {
      const cached = [...g.nodes.values()].filter((n) => n.def.cache !== undefined);
      const names = cached.map((n) => `"${n.def.name}"`).join(', ');
      throw new WaymarkError(
        'OPTIONS_INVALID',
        `graph "${g.name}" has ${found === undefined ? 'no node' : 'no cache on node'} "${node}"; ${cached.length === 0 ? 'none of its nodes is cached' : `its cached nodes: ${names}`}`,
        { retryable: false, details: { option: 'node' } },
      );
    }
  }
  return store.clearMemos(g.name, node);
}
