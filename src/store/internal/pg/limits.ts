// Concurrency limits on PostgreSQL (limits.ts); the SQL is in pg-limits-sql.ts.

import type pg from 'pg';
import type { QueuedFilter, RunLimitRecord } from '../../limits.js';
import type { NewRun } from '../../store.js';
import { unavailable } from '../pg-errors.js';
import { limitParam } from '../pg-params.js';
import { pgTypes } from '../pg-rows.js';
import type { Row } from '../rows.js';
import type { PgConnection } from './connection.js';

/**
 * Creates runs with `create` and admits those with a limit, in one transaction on one pooled
 * connection: a queued run is recorded `waiting`, and a run is never left created but not
 * admitted. Runs without a limit are created as before, in one statement.
 */
export async function createAdmitted(
  db: PgConnection,
  runs: readonly NewRun[],
  create: (on: PgConnection) => Promise<void>,
): Promise<void> {
  if (runs.every((r) => r.limit === undefined)) return create(db);
  await db.ready();
  let client: pg.PoolClient;
  try {
    client = await db.pool.connect();
  } catch (error) {
    throw unavailable(db.schema, error);
  }
  // The same statements on this connection: what `create` sends joins the transaction.
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
    await on.query({ name: '', text: 'BEGIN' }, []);
    await create(on);
    for (const run of runs) {
      if (run.limit === undefined) continue;
      const { key, concurrency } = run.limit;
      await on.query(db.sql.limitAdmit, [run.id, run.graph, key, concurrency, run.createdAt]);
    }
    await on.query({ name: '', text: 'COMMIT' }, []);
    done = true;
  } finally {
    if (!done) await client.query('ROLLBACK').catch(() => {});
    client.release();
  }
}

export async function runLimit(
  db: PgConnection,
  runId: string,
): Promise<RunLimitRecord | undefined> {
  const { rows } = await db.query(db.sql.runLimit, [runId]);
  return rows[0] === undefined ? undefined : recordOf(rows[0]);
}

export async function listQueued(
  db: PgConnection,
  filter: QueuedFilter = {},
): Promise<RunLimitRecord[]> {
  const { rows } = await db.query(db.sql.listQueued, [
    filter.graph ?? null,
    filter.key ?? null,
    limitParam(filter.limit),
  ]);
  return rows.map(recordOf);
}

export async function activeCount(db: PgConnection, graph: string, key: string): Promise<number> {
  const { rows } = await db.query(db.sql.activeCount, [graph, key]);
  return Number(rows[0]?.n ?? 0);
}

function recordOf(row: Row): RunLimitRecord {
  return {
    runId: String(row.run_id),
    graph: String(row.graph),
    key: String(row.limit_key),
    concurrency: Number(row.concurrency),
    state: String(row.state) as RunLimitRecord['state'],
    since: Number(row.since),
  };
}
