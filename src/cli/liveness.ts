import { type Driver, driverOf, liveWorkers } from '../runtime/ops/drivers.js';
import type { LeaseRecord, RunRecord, Store } from '../store/store.js';
import { iso } from './time.js';

/**
 * How `ls` and `show` name a run's status: a `running` run that a process or live workers move
 * on is `running`; one with work queued and no live worker of its graph is `queued`; one nobody
 * moves on (its lease expired or was given up, or its owner ran on this host and is gone) is
 * `interrupted` (`waymark resume` continues it, at once).
 *
 * @example
 * statusLabel(run, driver); // 'running' | 'queued' | 'interrupted' | 'waiting' | ...
 */
export function statusLabel(run: Pick<RunRecord, 'status'>, driver: Driver): string {
  if (run.status !== 'running') return run.status;
  if (driver.kind === 'nobody') return 'interrupted';
  return driver.kind === 'queued' ? 'queued' : 'running';
}

/** A running run something moves on now: the holder of its lease, or live workers of its graph. */
export function isDriven(driver: Driver): boolean {
  return driver.kind === 'owner' || driver.kind === 'workers';
}

/** Who moves on each running run among `runs`, by id (read once for all of them). */
export async function driversOf(
  store: Store,
  runs: readonly RunRecord[],
): Promise<Map<string, Driver>> {
  const running = runs.filter((r) => r.status === 'running');
  const workers = running.length === 0 ? undefined : await liveWorkers(store);
  const drivers = await Promise.all(running.map((r) => driverOf(store, r, workers)));
  return new Map(running.map((r, i) => [r.id, drivers[i]!]));
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

/** One line saying who moves a running run on, for `show`. */
export function ownerLine(
  run: Pick<RunRecord, 'status' | 'lease' | 'graph' | 'graphHash'>,
  driver: Driver,
): string | undefined {
  if (run.status !== 'running') return undefined;
  const lease = run.lease;
  switch (driver.kind) {
    case 'owner': {
      if (lease === null) return undefined;
      return `driven by ${lease.owner}${where(lease)}, lease until ${iso(lease.expiresAt)}`;
    }
    case 'workers': {
      const names = driver.workers.map((w) => `${w.id}${where(w)}`).join(', ');
      const queued = driver.queued === 0 ? '' : `, ${driver.queued} more queued`;
      return driver.held > 0
        ? `worked on by workers: ${driver.held} task(s) held by ${names}${queued}`
        : `worked on by workers: ${names} run(s) its graph and take(s) it up${queued}`;
    }
    case 'queued':
      return `queued: ${driver.queued} item(s) wait for a worker, and no live worker runs graph ${run.graph} (${run.graphHash.slice(0, 12)})`;
    case 'nobody':
      return 'interrupted: no process drives it (its lease expired or was given up)';
  }
}

function where(at: { readonly host: string | null; readonly pid: number | null }): string {
  if (at.host === null) return '';
  return ` on ${at.host}${at.pid === null ? '' : ` (pid ${at.pid})`}`;
}
