import { clearCache as clearMemos } from '../../runtime/ops/clear-cache.js';
import { exitCode } from '../exit-code.js';
import type { Io } from '../io.js';
import { loadGraph } from '../load-graph.js';
import { withStore } from '../session.js';

/** `waymark clear-cache <graph-file> [--node <name>]`: cached nodes run again on their next run. */
export async function clearCache(
  out: Io,
  file: string,
  flags: { readonly node?: string },
): Promise<number> {
  out.about.graphFile = file;
  const { graph, path } = await loadGraph(file);
  out.about.graphFile = path;
  const forgotten = await withStore(out, 'existing', (store) =>
    clearMemos(store, graph, flags.node),
  );
  out.json({ type: 'cache-cleared', graph: graph.name, node: flags.node ?? null, forgotten });
  const which =
    flags.node === undefined
      ? `graph "${graph.name}"`
      : `node "${flags.node}" of graph "${graph.name}"`;
  out.line(`forgot ${forgotten} cached output(s) of ${which}`);
  return exitCode.succeeded;
}
