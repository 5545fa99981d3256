import { readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { WaymarkError } from '../error/waymark-error.js';
import type { CompiledGraph } from '../graph/compiled.js';
import { loadGraph } from './load-graph.js';
import { graphFileLabel } from './session.js';

const graphExtensions = /\.(ts|mts|js|mjs)$/;

/** The module each graph `graphsOf` loaded came from. */
const files = new WeakMap<CompiledGraph, string>();

/** Notes the module `graph` was loaded from, for {@link servedRunLabels}. */
export function noteGraphFile(graph: CompiledGraph, file: string): void {
  files.set(graph, file);
}

/**
 * The labels a run the API starts of `graph` gets: its module, as `waymark run` records it, so
 * that `answer`, `show` or `resume` from the command line find the graph without `--graph`.
 */
export function servedRunLabels(graph: CompiledGraph): Record<string, string> | undefined {
  const file = files.get(graph);
  return file === undefined ? undefined : { [graphFileLabel]: file };
}

/** The graphs of a module, or of every graph module in a folder (not below it). */
export async function graphsOf(where: string): Promise<CompiledGraph[]> {
  const path = resolve(where);
  let modules = [path];
  try {
    if (statSync(path).isDirectory()) {
      modules = readdirSync(path)
        .filter((name) => graphExtensions.test(name) && !name.includes('.test.'))
        .sort()
        .map((name) => join(path, name));
    }
  } catch {
    // A missing path: loadGraph says so, with its code.
  }
  if (modules.length === 0) {
    throw new WaymarkError('USAGE_INVALID', `--graphs ${where}: the folder holds no graph module`, {
      retryable: false,
    });
  }
  const graphs: CompiledGraph[] = [];
  for (const file of modules) {
    const { graph } = await loadGraph(file);
    files.set(graph, file);
    graphs.push(graph);
  }
  const names = new Set<string>();
  for (const g of graphs) {
    if (names.has(g.name)) {
      throw new WaymarkError(
        'USAGE_INVALID',
        `--graphs ${where}: two modules declare graph "${g.name}"`,
        {
          retryable: false,
        },
      );
    }
    names.add(g.name);
  }
  return graphs;
}
