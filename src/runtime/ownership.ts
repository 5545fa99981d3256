import { isWaymarkError } from '../error/waymark-error.js';
import type { Lease, LeaseRecord, Store } from '../store/store.js';
import type { Clock } from './clock.js';
import { type Owner, ownerIsDead } from './identity.js';

// Why a keeper stops: one reason for all, not a DOMException with a stack per run.
const done = new Error('the driver stopped');

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

/**
 * Keeps a lease alive while its driver works: renews it every third of its length, through the
 * run's clock. A renewal is one small write on a timer, never a write per step. When the store
 * says the lease is lost (another process took the run over), or renewals keep failing until
 * the lease must have expired, `onLost` is called once: the driver must stop its own work.
 */
export class LeaseKeeper {
  #lease: Lease;
  readonly #stopped = new AbortController();

  constructor(
    store: Store,
    lease: Lease,
    leaseMs: number,
    clock: Clock,
    onLost: (why: unknown) => void,
  ) {
    this.#lease = lease;
    void this.#keep(store, leaseMs, clock, onLost);
  }

  /** The lease as last renewed. */
  get lease(): Lease {
    return this.#lease;
  }

  /** Stops renewing (the driver is done; it releases the lease itself). */
  stop(): void {
    this.#stopped.abort(done);
  }

  async #keep(
    store: Store,
    leaseMs: number,
    clock: Clock,
    onLost: (why: unknown) => void,
  ): Promise<void> {
    const signal = this.#stopped.signal;
    const every = Math.max(1, Math.floor(leaseMs / 3));
    // Renewals count by the run's clock; the lease itself expires by the store's.
    let lastRenewed = clock.now();
    while (!signal.aborted) {
      await clock.sleep(every, signal);
      if (signal.aborted) return;
      try {
        const { renewed, lost } = await store.renew([this.#lease], leaseMs);
        if (lost.length > 0) return onLost(undefined);
        this.#lease = renewed[0] ?? this.#lease;
        lastRenewed = clock.now();
      } catch (error) {
        // A store that cannot be reached may come back; past the lease's length, another
        // process may already have taken the run, so this one stops.
        if (clock.now() - lastRenewed >= leaseMs) return onLost(error);
      }
    }
  }
}
