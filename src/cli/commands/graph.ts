import { cachedBound } from '../../cost/budget.js';
import { costNotes } from '../../cost/cost-notes.js';
import { WaymarkError } from '../../error/waymark-error.js';
import { type CostOverlay, type RunOverlay, renderGraph } from '../../graph/render.js';
import { expectedCost } from '../../runtime/ops/expected.js';
import { inspect } from '../../runtime/ops/inspect.js';
import { exitCode } from '../exit-code.js';
import type { Io } from '../io.js';
import { loadGraph } from '../load-graph.js';
import { withExistingStore, withRunStore } from '../session.js';

/** `waymark graph <graph-file>`: Mermaid or DOT, with a run's path, or the costs, over it. */
export async function render(
  out: Io,
  file: string,
  flags: { readonly format: string; readonly run?: string; readonly cost?: boolean },
): Promise<number> {
  const format = flags.format;
  if (format !== 'mermaid' && format !== 'dot') {
    throw new WaymarkError('USAGE_INVALID', `--format ${format}: use mermaid or dot`, {
      retryable: false,
    });
  }
  out.about.graphFile = file;
  const { graph } = await loadGraph(file);
  let overlay: RunOverlay | undefined;
  if (flags.run !== undefined) {
    const runId = flags.run;
    const view = await withRunStore(out, runId, (store) => inspect(store, graph, runId));
    const counts: Record<string, number> = {};
    const seen = new Set<string>();
    for (const entry of view.trace.entries) {
      if (seen.has(entry.activation)) continue;
      seen.add(entry.activation);
      counts[entry.node] = (counts[entry.node] ?? 0) + 1;
    }
    const stopped = view.snapshot.status !== 'succeeded';
    overlay = {
      counts,
      path: view.trace.path,
      status: view.snapshot.status,
      ...(stopped && { stoppedAt: [...new Set(view.snapshot.pending.map((a) => a.node))] }),
    };
  }
  let cost: CostOverlay | undefined;
  if (flags.cost === true) {
    // What earlier runs spent comes from the database, when there is one: never created for it.
    const expected = await withExistingStore(out, (store) => expectedCost(store, graph));
    cost = costNotes(cachedBound(graph), expected?.value);
  }
  const text = renderGraph(graph.def, {
    format,
    ...(overlay && { run: overlay }),
    ...(cost && { cost }),
  });
  // The rendering is the output, so it is printed even with --quiet; --json wraps it.
  out.json({ type: 'graph', graph: graph.name, format, text });
  out.essential(text);
  return exitCode.succeeded;
}
