import { WaymarkError } from '../../error/waymark-error.js';

// How the PostgreSQL store names what went wrong: every driver failure becomes a stable code
// with the SQLSTATE in its details, and nothing node-postgres throws leaves the store raw.
// Testable without a database.

/**
 * SQLSTATEs after which the same call can succeed: the connection was lost or refused (class
 * 08), the server is shutting down or starting (57P01-57P03), a statement was cancelled or
 * timed out (57014), a serialization failure or deadlock rolled the transaction back (40001,
 * 40P01), a lock was not available (55P03), too many connections (53300), or the server is a
 * read-only standby for now (25006: a failover in progress).
 */
const passing: ReadonlySet<string> = new Set([
  '40001',
  '40P01',
  '55P03',
  '57014',
  '57P01',
  '57P02',
  '57P03',
  '53300',
  '25006',
]);

/** Failures node-postgres or Node.js report without a SQLSTATE, as the class-08 code libpq gives. */
const clientSide: readonly (readonly [RegExp, string])[] = [
  // Could not connect: refused, no such host, no route, connect timeout, no free pool slot.
  [/^(ECONNREFUSED|ENOTFOUND|EAI_AGAIN|EHOSTUNREACH|ENETUNREACH|ETIMEDOUT)$/, '08001'],
  [/timeout exceeded when trying to connect|connection timeout/i, '08001'],
  // Lost a connection that was open.
  [/^(ECONNRESET|EPIPE|ECONNABORTED)$/, '08006'],
  [/Connection terminated|connection error and is not queryable|not queryable/i, '08006'],
];

interface DriverError {
  readonly code?: unknown;
  readonly message?: unknown;
  readonly severity?: unknown;
  readonly errors?: readonly unknown[];
}

/**
 * The SQLSTATE of a driver error: the server's own, or for a failure the client saw itself
 * (refused, lost, timed out) the class-08 code libpq would report; null for anything else.
 *
 * @example
 * sqlstateOf(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' })); // '08001'
 */
export function sqlstateOf(error: unknown): string | null {
  if (typeof error !== 'object' || error === null) return null;
  const e = error as DriverError;
  if (typeof e.severity === 'string' && typeof e.code === 'string' && /^[0-9A-Z]{5}$/.test(e.code))
    return e.code;
  // Node.js reports a refused connection to every address of a host as one AggregateError.
  const codes = [e.code, ...(e.errors ?? []).map((inner) => (inner as DriverError)?.code)];
  for (const [pattern, sqlstate] of clientSide) {
    if (codes.some((code) => typeof code === 'string' && pattern.test(code))) return sqlstate;
    if (typeof e.message === 'string' && pattern.test(e.message)) return sqlstate;
  }
  return null;
}

/**
 * A driver failure as STORE_UNAVAILABLE, retryable where trying again can work, with its
 * SQLSTATE in `details`; a WaymarkError passes through as it is.
 *
 * @example
 * throw unavailable('waymark', error);
 */
export function unavailable(schema: string, error: unknown): WaymarkError {
  if (error instanceof WaymarkError) return error;
  const sqlstate = sqlstateOf(error);
  const retryable = sqlstate !== null && (sqlstate.startsWith('08') || passing.has(sqlstate));
  const message = error instanceof Error ? error.message : String(error);
  const state = sqlstate === null ? '' : ` (SQLSTATE ${sqlstate})`;
  return new WaymarkError(
    'STORE_UNAVAILABLE',
    `PostgreSQL store (schema "${schema}"): ${message}${state}`,
    { retryable, details: { schema, sqlstate }, cause: error },
  );
}

/** The store was closed: nothing more can be asked of it. */
export function closedStore(schema: string): WaymarkError {
  return new WaymarkError('STORE_UNAVAILABLE', `PostgreSQL store (schema "${schema}") was closed`, {
    retryable: false,
    details: { schema, sqlstate: null },
  });
}

/** The constraint a unique violation (23505) names, if that is what `error` is. */
export function uniqueViolation(error: unknown): string | undefined {
  const e = error as { code?: unknown; constraint?: unknown; severity?: unknown };
  if (typeof e?.severity !== 'string' || e.code !== '23505') return undefined;
  return typeof e.constraint === 'string' ? e.constraint : '';
}

/** Schema names the store accepts: lower-case letters, digits and `_`, not `pg_`, at most 63. */
const schemaName = /^[a-z_][a-z0-9_]{0,62}$/;

/**
 * The schema name, checked, as a quoted identifier for SQL text.
 *
 * @example
 * quoteSchema('waymark'); // '"waymark"'
 */
export function quoteSchema(schema: unknown): string {
  if (typeof schema !== 'string' || !schemaName.test(schema) || schema.startsWith('pg_')) {
    throw new WaymarkError(
      'OPTIONS_INVALID',
      `the PostgreSQL schema must be a name of lower-case letters, digits and _ (at most 63, not starting with a digit or pg_), not ${JSON.stringify(schema)}`,
      { retryable: false },
    );
  }
  return `"${schema}"`;
}
