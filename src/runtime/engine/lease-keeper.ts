import type { ClaimedTask, Lease, Store } from '../../store/store.js';
import type { WorkQueue } from '../../store/work-queue.js';
import { monotonicMs, systemClock } from '../clock.js';
import { isPassing } from './patiently.js';

/**
 * Why a kept lease's work must stop: another process took it (`lost`), this process could not
 * renew it in time and another may take it any moment (`lapsed`), or the run stopped meanwhile
 * by another process's hand, a cancellation, which takes no lease (`stopped`).
 */
export type LeaseLoss = 'lost' | 'lapsed' | 'stopped';

/** One lease the keeper renews, until `release`. */
export interface Kept<T> {
  /** The lease (or task) as last renewed: what a release of it gives back. */
  readonly current: T;
  /** Stops renewing it (the work is done, or given back by its holder). */
  release(): void;
}

/** Options of a {@link LeaseKeeper}. */
export interface KeeperOptions {
  /** How long each renewal extends a lease, by the store's clock. */
  readonly leaseMs: number;
  /** Also renewed on every tick: a worker's registration. */
  readonly register?: () => Promise<void>;
  /**
   * Whether a kept run whose status is no longer `running` has its work stopped (`stopped`):
   * a worker running a run's activation itself learns of a cancellation this way. One read per
   * kept run per tick; off for a driver that meets a cancellation at its next commit anyway.
   */
  readonly watchStatus?: boolean;
  /** Told of a renewal that failed: the store may be unreachable for a while. */
  readonly onError?: (error: unknown) => void;
}

interface Entry<T> {
  current: T;
  /** When the claim or the renewal that set the lease's expiry was sent, by {@link monotonicMs}. */
  at: number;
  done: boolean;
  readonly onLoss: (why: LeaseLoss) => void;
}

// Why the keeper's tick stops: one reason object, not a DOMException per keeper.
const stopping = new Error('the lease keeper stopped');

/**
 * Keeps leases alive while their holder works on them, for both hosts: the in-process driver
 * of a run, and a worker with its runs and tasks. Every third of a lease it renews everything it
 * keeps in one batch per kind, never awaiting a renewal before the next tick (a reply that
 * never comes, a connection dead without a word, must not keep later ones from being tried),
 * and before each renewal it stops the work whose lease could expire before that renewal
 * lands: counted from when the claim or last good renewal was sent, so the work stops a third
 * of a lease before the store's expiry, never after it. A loss is told once, and the lease is
 * then no longer kept; only the store's clock decides expiry. Timing is real time (a monotonic
 * clock), not the run's injected one: a lease expires by the store's clock however a test moves
 * the run's.
 *
 * @example
 * const keeper = new LeaseKeeper(store, { leaseMs: 30_000 });
 * const kept = keeper.keepRun(lease, sentAt, (why) => drive.lose(why));
 * // ... work ...
 * kept.release();
 * await keeper.stop();
 */
export class LeaseKeeper {
  readonly #store: Pick<Store, 'renew' | 'getRun'> & Partial<Pick<WorkQueue, 'renewTasks'>>;
  readonly #options: KeeperOptions;
  readonly #runs = new Set<Entry<Lease>>();
  readonly #tasks = new Set<Entry<ClaimedTask>>();
  readonly #stop = new AbortController();
  #ticking: Promise<void> | undefined;

  constructor(
    store: Pick<Store, 'renew' | 'getRun'> & Partial<Pick<WorkQueue, 'renewTasks'>>,
    options: KeeperOptions,
  ) {
    this.#store = store;
    this.#options = options;
  }

  /** How often the keeper renews and checks: a third of a lease. */
  get every(): number {
    return Math.max(1, Math.floor(this.#options.leaseMs / 3));
  }

  /** Keeps a run's lease, claimed (or last renewed) at `sentAt` by {@link monotonicMs}. */
  keepRun(lease: Lease, sentAt: number, onLoss: (why: LeaseLoss) => void): Kept<Lease> {
    return this.#keep(this.#runs, lease, sentAt, onLoss);
  }

  /** Keeps a claimed task's lease, claimed at `sentAt` by {@link monotonicMs}. */
  keepTask(task: ClaimedTask, sentAt: number, onLoss: (why: LeaseLoss) => void): Kept<ClaimedTask> {
    return this.#keep(this.#tasks, task, sentAt, onLoss);
  }

  /** Starts ticking (once): renewals and the lapse checks run until `stop`. */
  start(): void {
    this.#ticking ??= this.#tick();
  }

  /**
   * Stops renewing. A renewal still in flight could land after its holder gave the lease up; it
   * is waited for, but not for longer than a tick (a hung one must not hold the caller).
   */
  async stop(): Promise<void> {
    this.#stop.abort(stopping);
    await this.#ticking;
  }

  #keep<T>(set: Set<Entry<T>>, current: T, at: number, onLoss: (why: LeaseLoss) => void): Kept<T> {
    const entry: Entry<T> = { current, at, done: false, onLoss };
    set.add(entry);
    this.start();
    return {
      get current() {
        return entry.current;
      },
      release: () => {
        entry.done = true;
        set.delete(entry);
      },
    };
  }

  async #tick(): Promise<void> {
    const signal = this.#stop.signal;
    const every = this.every;
    const renewing = new Set<Promise<void>>();
    while (!signal.aborted) {
      await systemClock.sleep(every, signal);
      if (signal.aborted) break;
      // On every tick, whether the renewal before came back or not: one that hangs must not
      // keep the work going past its leases.
      this.#lapse(every);
      const renewal = this.#renew().finally(() => renewing.delete(renewal));
      renewing.add(renewal);
    }
    if (renewing.size > 0) await Promise.race([Promise.all(renewing), systemClock.sleep(every)]);
  }

  /** Stops the work whose lease may expire before the next renewal could land. */
  #lapse(every: number): void {
    const { leaseMs } = this.#options;
    const now = monotonicMs();
    for (const set of [this.#runs, this.#tasks] as Set<Entry<unknown>>[]) {
      for (const entry of set) {
        if (now + every < entry.at + leaseMs) continue;
        this.#lose(set, entry, 'lapsed');
      }
    }
  }

  #lose<T>(set: Set<Entry<T>>, entry: Entry<T>, why: LeaseLoss): void {
    if (entry.done) return;
    entry.done = true;
    set.delete(entry);
    entry.onLoss(why);
  }

  async #renew(): Promise<void> {
    const renewals: Promise<void>[] = [
      this.#patiently((sent) => this.#renewRuns(sent)),
      this.#patiently((sent) => this.#renewTasks(sent)),
    ];
    const { register } = this.#options;
    if (register !== undefined) renewals.push(this.#patiently(register));
    for (const result of await Promise.allSettled(renewals)) {
      if (result.status === 'rejected') this.#options.onError?.(result.reason);
    }
  }

  /**
   * A renewal that fails for a store that cannot be reached for a moment is taken again after a
   * short pause (50, 100, 200 ... ms), within the tick: waiting a whole tick for the next one
   * would leave a lease to lapse after a single lost connection.
   */
  async #patiently(renewal: (sent: number) => Promise<void>): Promise<void> {
    const until = monotonicMs() + this.every;
    for (let failures = 0; ; failures++) {
      try {
        return await renewal(monotonicMs());
      } catch (error) {
        const wait = 50 * 2 ** failures;
        const stopped = this.#stop.signal.aborted;
        if (!isPassing(error) || stopped || monotonicMs() + wait >= until) throw error;
        this.#options.onError?.(error);
        await systemClock.sleep(wait, this.#stop.signal);
      }
    }
  }

  async #renewRuns(sent: number): Promise<void> {
    const entries = [...this.#runs];
    if (entries.length === 0) return;
    const { leaseMs } = this.#options;
    const { renewed, lost } = await this.#store.renew(
      entries.map((e) => e.current),
      leaseMs,
    );
    const byRun = new Map(renewed.map((l) => [l.runId, l]));
    const gone = new Set(lost);
    for (const entry of entries) {
      if (entry.done) continue;
      if (gone.has(entry.current.runId)) {
        this.#lose(this.#runs, entry, 'lost');
        continue;
      }
      entry.current = byRun.get(entry.current.runId) ?? entry.current;
      entry.at = sent;
    }
    if (this.#options.watchStatus !== true) return;
    // A cancellation takes no lease: the run's row says it stopped.
    await Promise.all(
      entries.map(async (entry) => {
        if (entry.done) return;
        const record = await this.#store.getRun(entry.current.runId);
        if (record !== undefined && record.status === 'running') return;
        this.#lose(this.#runs, entry, 'stopped');
      }),
    );
  }

  async #renewTasks(sent: number): Promise<void> {
    const entries = [...this.#tasks];
    if (entries.length === 0 || this.#store.renewTasks === undefined) return;
    const { leaseMs } = this.#options;
    const { lost } = await this.#store.renewTasks(
      entries.map((e) => e.current),
      leaseMs,
    );
    const gone = new Set(lost);
    for (const entry of entries) {
      if (entry.done) continue;
      const { runId, activation } = entry.current;
      if (gone.has(`${runId}/${activation}`)) this.#lose(this.#tasks, entry, 'lost');
      else entry.at = sent;
    }
  }
}
