import type { Lease } from '../store/store.js';
import type { Activation, Snapshot } from './core/snapshot.js';
import type { Attempt } from './execute.js';
import type { Booked, FoldBook } from './fold-book.js';
import type { TaskInput } from './task-input.js';

/** A place to run one node body in, taken from a worker's concurrency; given back once. */
export interface Slot {
  free(): void;
}

/** Why a worker stops the body of a run it holds. */
export type HeldStop =
  /** Another worker took the run over: nothing the body does can be recorded. */
  | 'lost'
  /** The worker is shutting down: the activation is left for the next claim of the run. */
  | 'drain'
  /** The run stopped (cancelled from another process): the commit after the body meets it. */
  | 'stopped'
  /**
   * The worker could not renew the run's lease in time: a completion the body reaches anyway is
   * committed, fenced by the epoch; a failure, most likely the stop's own doing, is left for
   * the next claim, which runs the node again.
   */
  | 'lapsed';

/** What a held run needs from the worker that holds it. */
export interface HeldDriver {
  /** Runs one attempt of the activation `input` is for; never rejects for what the node does. */
  execute(node: string, input: TaskInput, signal: AbortSignal): Promise<Attempt>;
  /** A slot for the run's next activation, or none: then it is queued as a task for anyone. */
  hold(): Slot | undefined;
  /** Told after each commit the run makes. */
  committed?(booked: Booked, activation: Activation, status: Snapshot['status']): void;
}

/**
 * A run a worker folded and kept, to run its sole next activation itself rather than queue a
 * task for it: a chain's next node, a map's join, a one-node run. It runs under the run's lease,
 * which the worker renews with its tasks' leases; its completion is stepped and committed with
 * whatever the fold had not committed yet (a run's start), fenced by seq and epoch like every
 * fold. While the run stays sequential and the worker has room, it goes on to the next
 * activation; otherwise the commit schedules tasks and gives the lease up. A worker that dies
 * meanwhile leaves the run `running` with no task queued: once its lease expires the next claim
 * folds it as a run whose driver died, and schedules the activation again.
 */
export class HeldRun {
  readonly #book: FoldBook;
  #next: Activation;
  #slot: Slot;
  readonly #stop = new AbortController();
  #why: HeldStop | undefined;

  constructor(book: FoldBook, next: Activation, slot: Slot) {
    this.#book = book;
    this.#next = next;
    this.#slot = slot;
  }

  get lease(): Lease {
    return this.#book.lease;
  }

  /** The activation running now, or about to. */
  get activation(): Activation {
    return this.#next;
  }

  /** The seq of the run's last commit this worker made or caught up to. */
  get seq(): number {
    return this.#book.seq;
  }

  /** Stops the body running now; see {@link HeldStop}. */
  stop(why: HeldStop): void {
    if (this.#why === 'lost' || this.#why === 'drain') return;
    this.#why = why;
    this.#stop.abort(new Error(`the run's body was stopped (${why})`));
  }

  /**
   * Runs the held activation and the run's next ones while it can; resolves with whether the
   * last commit gave the lease up (if not, the caller releases it).
   * @throws WaymarkError `LEASE_LOST`, `STORE_*`: the caller drops the run (and its lease).
   */
  async drive(driver: HeldDriver): Promise<{ readonly released: boolean }> {
    for (;;) {
      const activation = this.#next;
      let attempt: Attempt;
      try {
        attempt = await driver.execute(
          activation.node,
          this.#book.inputOf(activation),
          this.#stop.signal,
        );
      } finally {
        this.#slot.free();
      }
      if (this.#why === 'lost' || this.#why === 'drain') return { released: false };
      if (this.#why === 'lapsed' && attempt.event.type !== 'completed') return { released: false };
      this.#book.add([{ event: attempt.event, attempt }]);
      const candidate = this.#why === undefined ? this.#book.soleNext() : undefined;
      const slot = candidate === undefined ? undefined : driver.hold();
      let booked: Booked;
      try {
        booked = await this.#book.commit(slot === undefined ? undefined : candidate);
      } catch (error) {
        slot?.free();
        throw error;
      }
      if (slot !== undefined && booked.kept === undefined) slot.free();
      driver.committed?.(booked, activation, this.#book.after.status);
      if (booked.kept === undefined) return { released: booked.released };
      this.#next = booked.kept;
      this.#slot = slot!;
    }
  }
}
