import type pg from 'pg';
import { WaymarkError } from '../../error/waymark-error.js';
import type { Commit, WaitRecord } from '../store.js';

// The PostgreSQL store's options and the parameters its statements take: checked, and shaped
// as arrays where a statement takes many rows at once.

/** Options of a `PostgresStore` (from `waymark/postgres`). */
export interface PostgresStoreOptions {
  /**
   * Where the database is: `postgres://user:password@host:5432/database`. Without it (and
   * without `pool`), node-postgres's defaults apply: the `PGHOST`, `PGDATABASE`, `PGUSER`, ...
   * variables, as psql reads them. A string alone may be passed instead of the options.
   */
  readonly connectionString?: string;
  /**
   * A pool to use instead of one the store creates (then `connectionString` and `poolSize` are
   * not given). The store never ends it, and listens to none of its events: give it an
   * `'error'` listener, as node-postgres asks of every pool.
   */
  readonly pool?: pg.Pool;
  /** The PostgreSQL schema that holds the store's tables, created if missing. Default `waymark`. */
  readonly schema?: string;
  /** How many connections the store's own pool opens at most. Default 10. */
  readonly poolSize?: number;
  /**
   * How long a call of the store's own pool waits to connect, or for a free connection, before
   * it fails with `STORE_UNAVAILABLE` (retryable). Default 10,000 ms.
   */
  readonly connectTimeoutMs?: number;
  /**
   * Whether idle workers wake on LISTEN/NOTIFY (a connection of the store's own, outside the
   * pool). Default `true`. `false` for PgBouncer in transaction mode, which keeps no LISTEN:
   * workers then find work by polling alone.
   */
  readonly notify?: boolean;
  /**
   * The connection string points at a pooler in transaction mode (PgBouncer's `pool_mode =
   * transaction`), which hands each transaction to any of its server connections and keeps no
   * session state. Default `false`. With `true` the store sends only unnamed statements (a named
   * prepared statement lives on one server connection), sets nothing at connect time (no
   * `statement_timeout` or `idle_in_transaction_session_timeout` startup parameter, which
   * PgBouncer refuses, and none of the planner's `SET`s, which would stay on whichever server
   * connection ran them), and `notify` defaults to `false`. Set those settings on the role or in
   * the pooler's `connect_query` instead ([stores.md](../../../docs/stores.md)); `queryTimeoutMs`
   * and `keepAliveMs`, the client's own, still apply.
   */
  readonly transactionPooling?: boolean;
  /**
   * Whether a schema without waymark's tables is given them. Default `true`. With `false` only
   * an existing waymark schema is used and nothing is created: a missing one is
   * `STORE_UNAVAILABLE` with `details.reason` `missing` (as a missing SQLite file is).
   */
  readonly create?: boolean;
  /**
   * The server cancels a statement of the store's own pool running longer than this
   * (`statement_timeout`); it fails with `STORE_UNAVAILABLE` (retryable). Default 2,000 ms.
   * With a `pool` given, that pool's own settings apply instead, as for every deadline here.
   */
  readonly statementTimeoutMs?: number;
  /**
   * The client gives up on a statement with no answer after this (node-postgres
   * `query_timeout`): a dead network or host, which the server cannot report. At least
   * `statementTimeoutMs`. Default 3,000 ms. A `Worker` refuses a lease of 3 times the larger
   * of the two or less: every statement must end within a third of its lease.
   */
  readonly queryTimeoutMs?: number;
  /** The server ends a session idle inside a transaction this long. Default 10,000 ms. */
  readonly idleInTransactionTimeoutMs?: number;
  /** TCP keep-alive probes after this much silence on a connection; 0 turns them off. Default 10,000 ms. */
  readonly keepAliveMs?: number;
}

/**
 * The constructor's argument as options; a string is the connection string. Anything else that
 * is not an options object is refused rather than read as "no options".
 *
 * @example
 * postgresOptions('postgres://localhost/app'); // { connectionString: 'postgres://localhost/app' }
 */
export function postgresOptions(argument: unknown): PostgresStoreOptions {
  const refuse = (message: string) =>
    new WaymarkError('OPTIONS_INVALID', message, { retryable: false });
  const options = typeof argument === 'string' ? { connectionString: argument } : argument;
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw refuse(
      'new PostgresStore() takes a connection string or an options object such as { connectionString }',
    );
  }
  const { connectionString, pool, poolSize, connectTimeoutMs } = options as PostgresStoreOptions;
  if (connectionString !== undefined && typeof connectionString !== 'string') {
    throw refuse('connectionString must be a string such as postgres://host/database');
  }
  if (pool !== undefined && (connectionString !== undefined || poolSize !== undefined)) {
    throw refuse('give either a pool, or a connectionString and poolSize for the store to use');
  }
  const deadlines = [
    'statementTimeoutMs',
    'queryTimeoutMs',
    'idleInTransactionTimeoutMs',
    'keepAliveMs',
  ];
  const given = deadlines.filter(
    (name) => (options as Record<string, unknown>)[name] !== undefined,
  );
  if (pool !== undefined && given.length > 0) {
    throw refuse(
      `${given.join(', ')} set the deadlines of the store's own pool; a given pool keeps its own (set statement_timeout and query_timeout on it)`,
    );
  }
  const { transactionPooling, notify } = options as PostgresStoreOptions;
  if (transactionPooling !== undefined && typeof transactionPooling !== 'boolean') {
    throw refuse('transactionPooling must be true or false');
  }
  if (transactionPooling === true) {
    if (notify === true) {
      throw refuse(
        'notify needs LISTEN, which a pooler in transaction mode does not keep: leave notify out (it is false with transactionPooling)',
      );
    }
    const session = given.filter(
      (name) => name === 'statementTimeoutMs' || name === 'idleInTransactionTimeoutMs',
    );
    if (session.length > 0) {
      throw refuse(
        `${session.join(', ')} are session settings, which a pooler in transaction mode does not keep: set statement_timeout and idle_in_transaction_session_timeout on the role or in the pooler's connect_query`,
      );
    }
  }
  for (const [name, value] of Object.entries({ poolSize, connectTimeoutMs })) {
    if (value !== undefined && !(Number.isSafeInteger(value) && value > 0)) {
      throw refuse(`${name} must be a whole number > 0, not ${JSON.stringify(value)}`);
    }
  }
  return options as PostgresStoreOptions;
}

/**
 * A whole number for a bigint parameter: never past what a JavaScript number holds exactly.
 *
 * @example
 * bigintParam(Number.POSITIVE_INFINITY, 0); // Number.MAX_SAFE_INTEGER
 */
export function bigintParam(value: number, fallback: number): number {
  if (Number.isNaN(value)) return fallback;
  return Math.min(Math.max(Math.floor(value), -Number.MAX_SAFE_INTEGER), Number.MAX_SAFE_INTEGER);
}

/**
 * A LIMIT: null for none, never below 0.
 *
 * @example
 * limitParam(-1); // 0
 */
export function limitParam(limit: number | undefined): number | null {
  if (limit === undefined || limit === Number.POSITIVE_INFINITY) return null;
  return Math.max(0, bigintParam(limit, 0));
}

/**
 * The parameters of a full commit after its snapshot: the waits it opens and closes and the
 * timers it sets and clears, as arrays. No two parts of the statement may touch the same row
 * (they cannot see each other's writes), so the result is settled here as applying them in
 * order would: a wait both opened and closed is opened closed, a wait opened twice keeps its
 * first record, a timer set twice keeps the later time, and one both set and cleared is set.
 * `settled`: the waits were settled already (a group's, see `mergeGroup`), none is stamped here.
 *
 * @example
 * const values = [...step, snapshot, ...commitExtras(commit)];
 */
export function commitExtras(commit: Commit, settled = false): unknown[] {
  const closing = new Set(commit.waits?.close ?? []);
  const opened = new Map<string, WaitRecord>();
  for (const wait of commit.waits?.open ?? []) {
    if (opened.has(wait.requestId)) continue;
    const shut = !settled && closing.has(wait.requestId) && wait.answer === null && !wait.closedAt;
    opened.set(wait.requestId, shut ? { ...wait, closedAt: commit.at } : wait);
  }
  const waits = [...opened.values()];
  const set = new Map((commit.timers?.set ?? []).map((timer) => [timer.id, timer.at]));
  return [
    waits.map((w) => w.requestId),
    waits.map((w) => w.node),
    waits.map((w) => w.activation),
    waits.map((w) => w.request),
    waits.map((w) => w.openedAt),
    waits.map((w) => w.answer),
    waits.map((w) => w.answeredBy),
    waits.map((w) => w.answeredAt),
    waits.map((w) => w.closedAt ?? null),
    [...closing],
    (commit.timers?.clear ?? []).filter((id) => !set.has(id)),
    [...set.keys()],
    [...set.values()],
    ...scheduleParams(commit),
  ];
}

/** The schedule's parameters: tasks as columns, cancelled activations, consumed inbox ids. */
function scheduleParams(commit: Commit): unknown[] {
  const tasks = commit.schedule?.tasks ?? [];
  const scheduled = new Set(tasks.map((t) => t.activation));
  return [
    tasks.map((t) => t.activation),
    tasks.map((t) => t.attempt),
    tasks.map((t) => t.node),
    tasks.map((t) => t.graph),
    tasks.map((t) => t.graphHash),
    tasks.map((t) => (t.notBefore === null ? null : Math.ceil(t.notBefore))),
    tasks.map((t) => t.input),
    // A task both cancelled and scheduled in one step is scheduled: the statement's parts cannot
    // see each other's rows, so the later intent is settled here.
    (commit.schedule?.cancel ?? []).filter((id) => !scheduled.has(id)),
    commit.schedule?.consumed ?? [],
  ];
}
