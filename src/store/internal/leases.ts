import { WaymarkError } from '../../error/waymark-error.js';
import type { LeaseClaim, LeaseRecord } from '../store.js';

// The lease rules every store applies the same way; a store only reads and writes the row, in
// one transaction, with its own clock.

/** A lease as a store keeps it. */
export interface LeaseRow {
  readonly owner: string;
  readonly host: string | null;
  readonly pid: number | null;
  readonly epoch: number;
  /** 0 once released. */
  readonly expiresAt: number;
}

/**
 * The lease a claim leaves on a run, or a refusal: a live lease of another owner is refused
 * unless the claim takes it over at the epoch it saw. The same owner renews in place; anyone
 * else (the lease expired, was released, or is taken over) gets epoch + 1.
 *
 * @example
 * const taken = takeLease('r1', row, { owner: 'me', leaseMs: 30_000 }, Date.now());
 */
export function takeLease(
  runId: string,
  row: LeaseRow | undefined,
  claim: LeaseClaim,
  now: number,
): { readonly ok: true; readonly row: LeaseRow } | { readonly ok: false } {
  checkLeaseMs(runId, claim.leaseMs);
  const live = row !== undefined && row.expiresAt > now;
  const mine = live && row.owner === claim.owner;
  if (live && !mine && claim.takeOver !== row.epoch) return { ok: false };
  return {
    ok: true,
    row: {
      owner: claim.owner,
      host: claim.host ?? null,
      pid: claim.pid ?? null,
      epoch: mine ? row.epoch : (row?.epoch ?? 0) + 1,
      expiresAt: now + claim.leaseMs,
    },
  };
}

/**
 * Refuses a lease length that is not a number of ms > 0 (OPTIONS_INVALID), before anything is
 * written; a store whose clock is its database's applies the rules of `takeLease` in SQL and
 * checks the length here.
 *
 * @example
 * checkLeaseMs('r1', claim.leaseMs);
 */
export function checkLeaseMs(runId: string, leaseMs: number): void {
  if (!(Number.isFinite(leaseMs) && leaseMs > 0)) {
    throw new WaymarkError('OPTIONS_INVALID', `a lease on run "${runId}" must last > 0 ms`, {
      retryable: false,
    });
  }
}

/** A lease row as a RunRecord shows it, live or not by the store's clock. */
export function leaseView(row: LeaseRow | undefined, now: number): LeaseRecord | null {
  return row === undefined ? null : { ...row, live: row.expiresAt > now };
}

/**
 * The refusal of a second owner while a lease is live: who holds the run, and until when.
 *
 * @example
 * throw runOwned('r1', row, Date.now());
 */
export function runOwned(runId: string, row: LeaseRow, now: number): WaymarkError {
  const where =
    row.host === null ? '' : ` on ${row.host}${row.pid === null ? '' : ` (pid ${row.pid})`}`;
  const seconds = Math.max(0, Math.ceil((row.expiresAt - now) / 1000));
  return new WaymarkError(
    'RUN_OWNED',
    `run "${runId}" is being driven by ${row.owner}${where}; its lease expires in ${seconds} s (at ${new Date(row.expiresAt).toISOString()}) unless renewed`,
    {
      details: {
        runId,
        owner: row.owner,
        host: row.host,
        pid: row.pid,
        epoch: row.epoch,
        expiresAt: row.expiresAt,
      },
    },
  );
}

/**
 * The refusal of a commit made under an epoch that is no longer the run's.
 *
 * @example
 * throw leaseLost('r1', 3, row);
 */
export function leaseLost(runId: string, epoch: number, row: LeaseRow | undefined): WaymarkError {
  const now = row === undefined ? 'none' : `${row.epoch}, held by ${row.owner}`;
  return new WaymarkError(
    'LEASE_LOST',
    `run "${runId}" is no longer driven under lease epoch ${epoch} (now: ${now}); this commit was refused and nothing was written`,
    { retryable: false, details: { runId, epoch, current: row?.epoch ?? null } },
  );
}
