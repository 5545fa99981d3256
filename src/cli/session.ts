import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { WaymarkError } from '../error/waymark-error.js';
import type { CompiledGraph } from '../graph/compiled.js';
import { labelsOf } from '../runtime/labels.js';
import type { SqliteStore } from '../store/sqlite-store.js';
import type { Io } from './io.js';
import { loadGraph } from './load-graph.js';

/** The label under which the CLI records a run's graph file, so later commands find it. */
export const graphFileLabel = 'graphFile';

/**
 * Opens the database named by --db (created with its directory when missing). The SQLite store
 * is loaded here, not at startup: better-sqlite3 is an optional peer dependency, and `validate`
 * and `graph` work without it.
 */
export async function openStore(io: Io): Promise<SqliteStore> {
  let sqlite: typeof import('../store/sqlite-store.js');
  try {
    sqlite = await import('../store/sqlite-store.js');
  } catch (cause) {
    const missing =
      (cause as { code?: unknown }).code === 'ERR_MODULE_NOT_FOUND' &&
      String((cause as Error).message).includes('better-sqlite3');
    if (!missing) throw cause;
    throw new WaymarkError(
      'STORE_UNAVAILABLE',
      'the waymark command keeps runs in SQLite, and better-sqlite3 is not installed: npm install better-sqlite3@12',
      { retryable: false, cause },
    );
  }
  return new sqlite.SqliteStore({ path: io.flags.db });
}

/**
 * The graph of a stored run: the file given with --graph, else the one the CLI recorded when
 * it started the run.
 * @throws WaymarkError `RUN_NOT_FOUND`, `USAGE_INVALID` (no graph file known),
 *   `GRAPH_FILE_INVALID`, `GRAPH_INVALID`.
 */
export async function graphOfRun(
  store: SqliteStore,
  runId: string,
  override: string | undefined,
): Promise<CompiledGraph> {
  const run = await store.getRun(runId);
  if (run === undefined) {
    throw new WaymarkError('RUN_NOT_FOUND', `there is no run "${runId}" in ${store.path}`, {
      retryable: false,
    });
  }
  if (override !== undefined) return (await loadGraph(override)).graph;
  const file = labelsOf(run)[graphFileLabel];
  if (file === undefined) {
    throw new WaymarkError(
      'USAGE_INVALID',
      `run "${runId}" (graph "${run.graph}") was not started by the waymark command, so it records no graph file; name it with --graph <file>`,
      { retryable: false },
    );
  }
  return (await loadGraph(file)).graph;
}

/**
 * Like {@link withStore}, for a command about an existing run: with no database file there is
 * no such run, and none is created just to say so.
 */
export async function withRunStore<T>(
  io: Io,
  runId: string,
  use: (store: SqliteStore) => Promise<T>,
): Promise<T> {
  const path = resolve(io.flags.db);
  if (io.flags.db !== ':memory:' && !existsSync(path)) {
    throw new WaymarkError('RUN_NOT_FOUND', `there is no run "${runId}": no database at ${path}`, {
      retryable: false,
    });
  }
  return withStore(io, use);
}

/** Runs `use` with the store open, and closes it whatever happens. */
export async function withStore<T>(io: Io, use: (store: SqliteStore) => Promise<T>): Promise<T> {
  const store = await openStore(io);
  try {
    return await use(store);
  } finally {
    await store.close();
  }
}

/** Parses a JSON argument, or fails with USAGE_INVALID naming the option. */
export function parseJson(text: string, option: string): unknown {
  try {
    return JSON.parse(text);
  } catch (cause) {
    const why = cause instanceof Error ? cause.message : String(cause);
    throw new WaymarkError('USAGE_INVALID', `${option} is not valid JSON: ${why}`, {
      retryable: false,
    });
  }
}
