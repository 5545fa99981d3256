import { ownerIsDead } from '../runtime/engine/identity.js';
import type { LeaseRecord, RunRecord } from '../store/store.js';
import { iso } from './time.js';

/**
 * How `ls` and `show` name a run's status: a `running` run whose lease is held is live (a
 * process drives it now); one whose lease expired or was given up, or whose owner ran on this
 * host and is gone, is `interrupted` (`waymark resume` continues it, at once).
 *
 * @example
 * statusLabel(run); // 'running' | 'interrupted' | 'waiting' | ...
 */
export function statusLabel(run: Pick<RunRecord, 'status' | 'lease'>): string {
  if (run.status !== 'running') return run.status;
  return isDriven(run) ? 'running' : 'interrupted';
}

/** A running run some process drives now: its lease is held, by an owner not known dead. */
export function isDriven(run: Pick<RunRecord, 'status' | 'lease'>): boolean {
  const lease = run.lease;
  return run.status === 'running' && lease?.live === true && !ownerIsDead(lease);
}

/** A run's lease as `--json` prints it: who drives (or last drove) it, and until when. */
export function leaseJson(lease: LeaseRecord | null) {
  if (lease === null) return null;
  return {
    owner: lease.owner,
    host: lease.host,
    pid: lease.pid,
    epoch: lease.epoch,
    live: lease.live,
    expiresAt: lease.expiresAt === 0 ? null : iso(lease.expiresAt),
  };
}

/** One line saying who drives a running run, for `show`. */
export function ownerLine(run: Pick<RunRecord, 'status' | 'lease'>): string | undefined {
  if (run.status !== 'running') return undefined;
  const lease = run.lease;
  if (lease !== null && isDriven(run)) {
    const where =
      lease.host === null
        ? ''
        : ` on ${lease.host}${lease.pid === null ? '' : ` (pid ${lease.pid})`}`;
    return `driven by ${lease.owner}${where}, lease until ${iso(lease.expiresAt)}`;
  }
  return 'interrupted: no process drives it (its lease expired or was given up)';
}
