import { hostname } from 'node:os';

/** Who drives a run: what a store's lease records, and what tells later that it died. */
export interface Owner {
  /** Unique per driver: the host, the process and a random part. */
  readonly owner: string;
  readonly host: string;
  readonly pid: number;
}

// Drivers alive in this process, by owner id. A lease whose owner is this process but not in
// this set belongs to a driver that is gone (its run() rejected, say): as dead as a killed
// process, and taken over at once.
const live = new Set<string>();

/**
 * A fresh owner identity for one driver of one run, registered as alive until `done` is called.
 *
 * @example
 * const me = newOwner(); try { ... } finally { me.done(); }
 */
// The host does not change while the process lives; asked once.
const host = hostname();

export function newOwner(): Owner & { done(): void } {
  const pid = process.pid;
  // The global Web Crypto, loaded when first used: `waymark ls` imports this file and never
  // makes an owner, and node:crypto costs a few ms at every start.
  const owner = `${host}:${pid}:${crypto.randomUUID().slice(0, 8)}`;
  live.add(owner);
  return { owner, host, pid, done: () => live.delete(owner) };
}

/**
 * Whether the owner a lease names is provably dead: it ran on this host, and its process is
 * gone, or it is this process and its driver has ended. An owner on another host can only be
 * waited out, until its lease expires by the store's clock.
 *
 * @example
 * if (ownerIsDead(details)) await store.acquire(runId, { ...claim, takeOver: details.epoch });
 */
export function ownerIsDead(lease: {
  readonly owner: string;
  readonly host: string | null;
  readonly pid: number | null;
}): boolean {
  if (lease.host !== host || lease.pid === null) return false;
  if (lease.pid === process.pid) return !live.has(lease.owner);
  try {
    process.kill(lease.pid, 0);
    return false;
  } catch (error) {
    // EPERM: the process exists but is another user's; only ESRCH says it is gone.
    return (error as { code?: unknown }).code === 'ESRCH';
  }
}
