import { isWaymarkError } from '../../error/waymark-error.js';
import type { Lease, LeaseRecord, Store } from '../../store/store.js';
import { monotonicMs } from '../clock.js';
import { newOwner, type Owner, ownerIsDead } from './identity.js';
import { patiently } from './patiently.js';

/** How long a lease lasts unless renewed: long enough to ride out a pause, short for a dead owner. */
export const defaultLeaseMs = 30_000;

/**
 * Takes a run's lease for this driver. A live lease of another owner is refused (`RUN_OWNED`,
 * naming the owner and when its lease expires), unless that owner is provably dead (same host
 * and its process gone, or a driver of this process that ended): then the run is taken over at
 * once, at the epoch that was seen, so of two processes taking over the same run one wins.
 * @throws WaymarkError `RUN_NOT_FOUND`, `RUN_OWNED`.
 *
 * @example
 * const lease = await takeRun(store, runId, newOwner(), defaultLeaseMs);
 */
export async function takeRun(
  store: Store,
  runId: string,
  me: Owner,
  leaseMs: number,
): Promise<Lease> {
  const claim = { owner: me.owner, host: me.host, pid: me.pid, leaseMs };
  try {
    return await store.acquire(runId, claim);
  } catch (error) {
    if (!isWaymarkError(error) || error.code !== 'RUN_OWNED') throw error;
    const held = error.details as Pick<LeaseRecord, 'owner' | 'host' | 'pid' | 'epoch'>;
    if (!ownerIsDead(held)) throw error;
    return store.acquire(runId, { ...claim, takeOver: held.epoch });
  }
}

/** A run's lease taken for one driver of this process, and when the claim was sent. */
export interface HeldRun {
  readonly lease: Lease;
  readonly leaseMs: number;
  /** When the claim was sent, by `monotonicMs()`: a lease keeper counts its expiry from here. */
  readonly sentAt: number;
  /** The driver is gone: its owner id no longer counts as alive in this process. */
  readonly done: () => void;
}

/**
 * Takes a run's lease for a new driver of this process ({@link takeRun}), with the identity it
 * holds it under; on a refusal the identity is let go at once.
 * @throws WaymarkError `RUN_NOT_FOUND`, `RUN_OWNED`.
 *
 * @example
 * const held = await holdRun(store, runId, defaultLeaseMs);
 */
export async function holdRun(store: Store, runId: string, leaseMs: number): Promise<HeldRun> {
  const me = newOwner();
  const sentAt = monotonicMs();
  try {
    // Taken again after a lost reply, the same owner's claim renews the lease it got.
    const lease = await patiently(() => takeRun(store, runId, me, leaseMs));
    return { lease, leaseMs, sentAt, done: me.done };
  } catch (error) {
    me.done();
    throw error;
  }
}
