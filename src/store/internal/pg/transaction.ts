// One transaction on one pooled connection, for the operations that take more than one
// statement (an admission under a lock, runs created with their limits).

import type pg from 'pg';
import { unavailable } from '../pg-errors.js';
import { pgTypes } from '../pg-rows.js';
import type { PgConnection } from './connection.js';

/**
 * Runs `body` between `begin` and COMMIT on one connection of the pool: every statement it
 * sends through the connection it is given joins the transaction; a throw rolls it back.
 * Driver failures map as `db.query`'s do (STORE_UNAVAILABLE unless a refusal names them).
 *
 * @example
 * await inTransaction(db, async (on) => { await on.query(db.sql.rateLock, ['openai']); });
 */
export async function inTransaction<T>(
  db: PgConnection,
  body: (on: PgConnection) => Promise<T>,
  begin = 'BEGIN',
): Promise<T> {
  await db.ready();
  let client: pg.PoolClient;
  try {
    client = await db.pool.connect();
  } catch (error) {
    throw unavailable(db.schema, error);
  }
  // Unnamed statements: prepared on this connection only, never cached under the pool's names.
  const on = Object.create(db, {
    query: {
      value: async (
        statement: { name: string; text: string },
        values: readonly unknown[],
        refusal?: (error: unknown) => Error | undefined,
      ) => {
        try {
          return await client.query({
            text: statement.text,
            values: values as unknown[],
            types: pgTypes,
          });
        } catch (error) {
          throw refusal?.(error) ?? unavailable(db.schema, error);
        }
      },
    },
  }) as PgConnection;
  let done = false;
  try {
    await on.query({ name: '', text: begin }, []);
    const result = await body(on);
    await on.query({ name: '', text: 'COMMIT' }, []);
    done = true;
    return result;
  } finally {
    if (!done) await client.query('ROLLBACK').catch(() => {});
    client.release();
  }
}
