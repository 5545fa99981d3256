// Rate limits on PostgreSQL (rates.ts); the SQL is in pg-rates-sql.ts.

import type { RateDecision, RateRequest, RateWindow } from '../../rates.js';
import { decideRate, type RateRow } from '../rate-rows.js';
import type { PgConnection } from './connection.js';
import { inTransaction } from './transaction.js';

/**
 * Decides an admission in one transaction on one pooled connection, under the resource's
 * advisory lock: the lock first, in its own statement, so that what the next statement reads
 * is what the previous holder committed. READ COMMITTED whatever the database's default: under
 * REPEATABLE READ the snapshot would be the one taken before the lock was granted.
 *
 * @example
 * await admitRate(db, { resource: 'openai', id: 'r1/a#1', at: Date.now(), requestsPerMinute: 60 });
 */
export function admitRate(db: PgConnection, request: RateRequest): Promise<RateDecision> {
  const { resource, id } = request;
  return inTransaction(
    db,
    async (on) => {
      await on.query(db.sql.rateLock, [resource]);
      const at = request.now?.() ?? request.at;
      const { rows } = await on.query(db.sql.rateLook, [resource, at]);
      const window: RateRow[] = [];
      let blockedUntil: number | undefined;
      for (const row of rows) {
        if (row.kind === 'block') blockedUntil = Number(row.at);
        else window.push({ id: String(row.id), at: Number(row.at), tokens: Number(row.tokens) });
      }
      const { decision, record } = decideRate({ ...request, at }, window, blockedUntil);
      if (record) await on.query(db.sql.rateAdmit, [resource, id, at, request.reserveTokens ?? 0]);
      return decision;
    },
    'BEGIN ISOLATION LEVEL READ COMMITTED',
  );
}

/**
 * Replaces an admission's reserved tokens with those used; a no-op if it has left the window.
 *
 * @example
 * await settleRate(db, 'openai', 'r1/a#1', 812);
 */
export async function settleRate(
  db: PgConnection,
  resource: string,
  id: string,
  tokens: number,
): Promise<void> {
  await db.query(db.sql.rateSettle, [resource, id, tokens]);
}

/**
 * Blocks a resource until `until`; a block already longer stays as it is.
 *
 * @example
 * await blockRate(db, 'openai', Date.now() + 20_000);
 */
export async function blockRate(db: PgConnection, resource: string, until: number): Promise<void> {
  await db.query(db.sql.rateBlock, [resource, until]);
}

/**
 * The resource's window at `at`: one statement, one snapshot, nothing written.
 *
 * @example
 * const { requests, tokens, blockedUntil } = await rateWindow(db, 'openai', Date.now());
 */
export async function rateWindow(
  db: PgConnection,
  resource: string,
  at: number,
): Promise<RateWindow> {
  const { rows } = await db.query(db.sql.rateWindow, [resource, at]);
  const row = rows[0]!;
  const blocked = row.blocked_until;
  return {
    resource,
    requests: Number(row.requests),
    tokens: Number(row.tokens),
    ...(blocked !== null && blocked !== undefined && { blockedUntil: Number(blocked) }),
  };
}
