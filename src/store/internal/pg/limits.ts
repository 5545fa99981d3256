// Concurrency limits on PostgreSQL (limits.ts); the SQL is in pg-limits-sql.ts.

import type { QueuedFilter, RunLimitRecord } from '../../limits.js';
import type { NewRun } from '../../store.js';
import { limitParam } from '../pg-params.js';
import type { Row } from '../rows.js';
import type { PgConnection } from './connection.js';
import { inTransaction } from './transaction.js';

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
  // What `create` sends on `on` joins the transaction.
  await inTransaction(db, async (on) => {
    await create(on);
    for (const run of runs) {
      if (run.limit === undefined) continue;
      const { key, concurrency } = run.limit;
      await on.query(db.sql.limitAdmit, [run.id, run.graph, key, concurrency, run.createdAt]);
    }
  });
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
