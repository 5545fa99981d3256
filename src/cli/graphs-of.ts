import { readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { WaymarkError } from '../error/waymark-error.js';
import type { CompiledGraph } from '../graph/compiled.js';
import { loadGraph } from './load-graph.js';

const graphExtensions = /\.(ts|mts|js|mjs)$/;

/** The graphs of a module, or of every graph module in a folder (not below it). */
export async function graphsOf(where: string): Promise<CompiledGraph[]> {
  const path = resolve(where);
  let files = [path];
  try {
    if (statSync(path).isDirectory()) {
      files = readdirSync(path)
        .filter((name) => graphExtensions.test(name) && !name.includes('.test.'))
        .sort()
        .map((name) => join(path, name));
    }
  } catch {
    // A missing path: loadGraph says so, with its code.
  }
  if (files.length === 0) {
    throw new WaymarkError('USAGE_INVALID', `--graphs ${where}: the folder holds no graph module`, {
      retryable: false,
    });
  }
  const graphs: CompiledGraph[] = [];
  for (const file of files) graphs.push((await loadGraph(file)).graph);
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
