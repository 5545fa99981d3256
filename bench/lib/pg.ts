// The PostgreSQL the worker benchmarks run on: WAYMARK_PG_URL (default: the server on this
// machine), a fresh schema per measurement, dropped afterwards, and what the server is set to.

import { randomBytes } from 'node:crypto';
import pg from 'pg';

/** The server: WAYMARK_PG_URL, or the one on this machine (trust auth, database `test`). */
export const pgUrl = process.env.WAYMARK_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** A pool for the bench's own statements (schemas, counts, the floor). */
export function adminPool(max = 2): pg.Pool {
  const pool = new pg.Pool({ connectionString: pgUrl, max, application_name: 'waymark-bench' });
  pool.on('error', () => {});
  return pool;
}

/** A fresh schema name: `waymark_bench_<what>_` and random hex. */
export function schemaName(what: string): string {
  return `waymark_bench_${what}_${randomBytes(4).toString('hex')}`;
}

/**
 * Runs `body` with a fresh schema name and drops the schema afterwards, whatever happened.
 * The body (or the stores it opens) creates the schema.
 */
export async function inSchema<T>(
  pool: pg.Pool,
  what: string,
  body: (schema: string) => Promise<T>,
): Promise<T> {
  const schema = schemaName(what);
  try {
    return await body(schema);
  } finally {
    await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => {});
  }
}

/** Fails with one line of reason when the server cannot be reached. */
export async function checkServer(pool: pg.Pool): Promise<void> {
  try {
    await pool.query('SELECT 1');
  } catch (error) {
    throw new Error(
      `bench: PostgreSQL at ${pgUrl} is unreachable (${(error as Error).message}); start it with ` +
        '`pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start` or set WAYMARK_PG_URL',
    );
  }
}

/** What the server is and how it commits, for the report. */
export async function serverInfo(pool: pg.Pool): Promise<string> {
  const { rows } = await pool.query<{ version: string; sync: string; fsync: string }>(
    `SELECT current_setting('server_version') AS version,
      current_setting('synchronous_commit') AS sync, current_setting('fsync') AS fsync`,
  );
  const s = rows[0]!;
  return `PostgreSQL ${s.version} (synchronous_commit=${s.sync}, fsync=${s.fsync})`;
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Percentile `p` (0-100) of `values`, nearest rank. */
export function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length)));
  return sorted[rank - 1]!;
}
