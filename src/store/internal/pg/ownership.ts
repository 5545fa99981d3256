// Run ownership on PostgreSQL (RunOwnership in store.ts): one lease per run, judged by the
// database's clock; and the timers commits set (TimerStore).

import type { Lease, LeaseClaim, TimerRecord } from '../../store.js';
import { checkLeaseMs, runOwned } from '../leases.js';
import { limitParam } from '../pg-params.js';
import { Columns, readLease, readTimer } from '../rows.js';
import type { PgConnection } from './connection.js';
import { runNotFound } from './run-log.js';

/** How often a refused claim is tried again when the refusal no longer holds. */
const maxRetries = 3;

export async function acquire(db: PgConnection, runId: string, claim: LeaseClaim): Promise<Lease> {
  checkLeaseMs(runId, claim.leaseMs);
  const { owner, leaseMs } = claim;
  const { host = null, pid = null, takeOver = null } = claim;
  for (let attempt = 1; ; attempt++) {
    const { rows } = await db.query(db.sql.acquire, [runId, owner, host, pid, leaseMs, takeOver]);
    if (rows[0] !== undefined) {
      const c = new Columns(rows[0], { runId, table: 'runs' });
      return { runId, owner, epoch: c.integer('epoch'), expiresAt: c.integer('expires_at') };
    }
    const { rows: held } = await db.query(db.sql.leaseOf, [runId]);
    if (held[0] === undefined) throw runNotFound(runId);
    const lease = readLease(held[0], runId);
    const now = new Columns(held[0], { runId, table: 'runs' }).integer('now');
    const refused =
      lease !== undefined &&
      lease.expiresAt > now &&
      lease.owner !== owner &&
      lease.epoch !== claim.takeOver;
    // The lease expired or was released between the two statements: claim it again.
    if (refused || attempt === maxRetries) throw runOwned(runId, lease!, now);
  }
}

export async function renew(
  db: PgConnection,
  leases: readonly Lease[],
  leaseMs: number,
): Promise<{ renewed: Lease[]; lost: string[] }> {
  if (leases.length === 0) return { renewed: [], lost: [] };
  checkLeaseMs(leases[0]!.runId, leaseMs);
  const { rows } = await db.query(db.sql.renew, [
    leases.map((l) => l.runId),
    leases.map((l) => l.epoch),
    leases.map((l) => l.owner),
    leaseMs,
  ]);
  // Which leases held: the run's epoch and owner still theirs. Keyed by both, with the run.
  const key = (runId: unknown, epoch: unknown, owner: unknown) =>
    JSON.stringify([runId, epoch, owner]);
  const held = new Map(
    rows.map((row) => [
      key(row.id, row.epoch, row.owner),
      new Columns(row, { runId: String(row.id), table: 'runs' }).integer('expires_at'),
    ]),
  );
  const renewed: Lease[] = [];
  const lost: string[] = [];
  for (const lease of leases) {
    const expiresAt = held.get(key(lease.runId, lease.epoch, lease.owner));
    if (expiresAt === undefined) lost.push(lease.runId);
    else renewed.push({ ...lease, expiresAt });
  }
  return { renewed, lost };
}

export async function release(db: PgConnection, lease: Lease): Promise<void> {
  await db.query(db.sql.release, [lease.runId, lease.epoch, lease.owner]);
}

export async function listTimers(db: PgConnection, runId: string): Promise<TimerRecord[]> {
  const { rows } = await db.query(db.sql.listTimers, [runId]);
  if (rows.length === 0) throw runNotFound(runId);
  return rows.filter((row) => row.id !== null).map(readTimer);
}

export async function nextTimerAt(db: PgConnection, after: number): Promise<number | undefined> {
  const { rows } = await db.query(db.sql.nextTimer, [after]);
  const at = rows[0]?.at as number | null | undefined;
  return at ?? undefined;
}

export async function dueTimers(
  db: PgConnection,
  at: number,
  limit?: number,
): Promise<TimerRecord[]> {
  const { rows } = await db.query(db.sql.dueTimers, [at, limitParam(limit)]);
  return rows.map(readTimer);
}
