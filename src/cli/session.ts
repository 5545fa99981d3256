import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { WaymarkError } from '../error/waymark-error.js';
import type { CompiledGraph } from '../graph/compiled.js';
import { labelsOf } from '../runtime/ops/labels.js';
import type { PostgresStore } from '../store/postgres-store.js';
import type { SqliteStore } from '../store/sqlite-store.js';
import type { Io } from './io.js';
import { isPostgres, postgresTarget, shownLocation } from './location.js';

/** A store the command opened: the SQLite file, or a PostgreSQL database (`--store postgres://`). */
export type CliStore = SqliteStore | PostgresStore;

/** Where a store keeps its runs, as messages print it. */
export function whereIs(store: CliStore): string {
  return 'path' in store ? store.path : `PostgreSQL schema "${store.schema}"`;
}

/** The label under which the CLI records a run's graph file, so later commands find it. */
export const graphFileLabel = 'graphFile';

/**
 * How a command uses the database: `create` (only `run`: the file and its directory are made
 * when missing), or `existing` (every other command: nothing is ever created, and a missing
 * file is said to be missing).
 */
export type StoreUse = 'create' | 'existing';

/**
 * Opens the database named by --db. The SQLite store is loaded here, not at startup:
 * `validate` and `graph` never load better-sqlite3.
 * @throws WaymarkError `STORE_UNAVAILABLE` (better-sqlite3 missing or broken, a directory),
 *   `STORE_CORRUPT` (not a waymark database), `STORE_VERSION_UNSUPPORTED`.
 */
export async function openStore(
  io: Io,
  use: StoreUse,
  pg: PgStatementDeadlines = {},
): Promise<CliStore> {
  if (isPostgres(io.flags.db)) return openPostgres(io.flags.db, use === 'create', pg);
  let sqlite: typeof import('../store/sqlite-store.js');
  try {
    sqlite = await import('../store/sqlite-store.js');
  } catch (cause) {
    const code = (cause as { code?: unknown }).code;
    const missing =
      (code === 'MODULE_NOT_FOUND' || code === 'ERR_MODULE_NOT_FOUND') &&
      String((cause as Error).message).includes("'better-sqlite3'");
    if (!missing) throw cause;
    throw new WaymarkError(
      'STORE_UNAVAILABLE',
      'better-sqlite3 is not installed: the waymark command keeps its runs in SQLite through it',
      {
        retryable: false,
        cause,
        details: { path: resolve(io.flags.db), reason: 'driver-missing' },
      },
    );
  }
  return new sqlite.SqliteStore({ path: io.flags.db, create: use === 'create' });
}

/** How long a PostgreSQL store's statements may run: a worker's short lease asks for less. */
export interface PgStatementDeadlines {
  readonly statementTimeoutMs?: number;
  readonly queryTimeoutMs?: number;
}

/** Opens a PostgreSQL store, loading node-postgres only now: `waymark/postgres` is optional. */
async function openPostgres(
  location: string,
  create: boolean,
  deadlines: PgStatementDeadlines,
): Promise<PostgresStore> {
  let postgres: typeof import('../store/postgres-store.js');
  try {
    postgres = await import('../store/postgres-store.js');
  } catch (cause) {
    const code = (cause as { code?: unknown }).code;
    if (code !== 'MODULE_NOT_FOUND' && code !== 'ERR_MODULE_NOT_FOUND') throw cause;
    throw new WaymarkError(
      'STORE_UNAVAILABLE',
      'pg is not installed: the waymark command reaches PostgreSQL through node-postgres',
      {
        retryable: false,
        cause,
        details: { reason: 'driver-missing', store: shownLocation(location) },
      },
    );
  }
  const target = postgresTarget(location);
  // Behind a transaction pooler the server's statement_timeout is the role's or the pooler's:
  // only the client's own deadline is set here.
  const { statementTimeoutMs: _server, ...clientDeadlines } = deadlines;
  return postgres.PostgresStore.open({
    ...target,
    create,
    ...(target.transactionPooling === true ? clientDeadlines : deadlines),
  });
}

/**
 * The graph of a stored run: the file given with --graph, else the one the CLI recorded when
 * it started the run. Loading it registers tsx: only commands that need the graph pay for it.
 * @throws WaymarkError `RUN_NOT_FOUND`, `USAGE_INVALID` (no graph file known),
 *   `GRAPH_FILE_INVALID`, `GRAPH_INVALID`.
 */
export async function graphOfRun(
  io: Io,
  store: CliStore,
  runId: string,
  override: string | undefined,
): Promise<CompiledGraph> {
  const file = await graphFileOf(io, store, runId, override);
  if (file === undefined) {
    const run = await store.getRun(runId);
    throw new WaymarkError(
      'USAGE_INVALID',
      `run "${runId}" (graph "${run?.graph}") was not started by the waymark command, so it records no graph file; name it with --graph <file>`,
      { retryable: false, details: { reason: 'no-graph-file' } },
    );
  }
  const { loadGraph } = await import('./load-graph.js');
  return (await loadGraph(file)).graph;
}

/**
 * The graph file of a stored run (--graph, else the recorded one), noted in `io.about` for the
 * hints; undefined when the run records none.
 * @throws WaymarkError `RUN_NOT_FOUND`.
 */
export async function graphFileOf(
  io: Io,
  store: CliStore,
  runId: string,
  override: string | undefined,
): Promise<string | undefined> {
  const run = await store.getRun(runId);
  if (run === undefined) {
    throw new WaymarkError('RUN_NOT_FOUND', `there is no run "${runId}" in ${whereIs(store)}`, {
      retryable: false,
    });
  }
  const file = override ?? labelsOf(run)[graphFileLabel];
  if (file !== undefined) io.about.graphFile = file;
  io.about.graphGiven = override !== undefined;
  return file;
}

/**
 * Like {@link withStore}, for a command about an existing run: with no database there is no
 * such run, and none is created just to say so.
 */
export async function withRunStore<T>(
  io: Io,
  runId: string,
  use: (store: CliStore) => Promise<T>,
): Promise<T> {
  io.about.runId = runId;
  const found = await withExistingStore(io, use);
  if (found === undefined) {
    throw new WaymarkError('RUN_NOT_FOUND', `there is no run "${runId}": ${noDatabase(io)}`, {
      retryable: false,
      details: { reason: 'no-database', path: locationOf(io) },
    });
  }
  return found.value;
}

/**
 * Runs `use` with an existing database open, and closes it; nothing when there is none (no
 * file, or no waymark schema in the PostgreSQL database), which is then left uncreated.
 */
export async function withExistingStore<T>(
  io: Io,
  use: (store: CliStore) => Promise<T>,
): Promise<{ readonly value: T } | undefined> {
  const { db } = io.flags;
  if (!isPostgres(db) && db !== ':memory:' && !existsSync(resolve(db))) return undefined;
  let store: CliStore;
  try {
    store = await openStore(io, 'existing');
  } catch (error) {
    const missing =
      error instanceof WaymarkError &&
      error.code === 'STORE_UNAVAILABLE' &&
      (error.details as { reason?: unknown } | undefined)?.reason === 'missing';
    if (missing) return undefined;
    throw error;
  }
  try {
    return { value: await use(store) };
  } finally {
    await store.close();
  }
}

/** Where the command's runs would be, as its messages print it: a resolved path, or the URL. */
export function locationOf(io: Io): string {
  return isPostgres(io.flags.db) ? shownLocation(io.flags.db) : resolve(io.flags.db);
}

/** Why there is nothing at the command's location, as a message says it. */
export function noDatabase(io: Io): string {
  if (!isPostgres(io.flags.db)) return `no database at ${locationOf(io)}`;
  const schema = postgresTarget(io.flags.db).schema ?? 'waymark';
  return `no waymark schema "${schema}" at ${locationOf(io)}`;
}

/** Runs `use` with the store open, and closes it whatever happens. */
export async function withStore<T>(
  io: Io,
  storeUse: StoreUse,
  use: (store: CliStore) => Promise<T>,
): Promise<T> {
  const store = await openStore(io, storeUse);
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
