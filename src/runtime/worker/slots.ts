import type { WorkKind } from '../../store/work-queue.js';

/** How long, at most, the event loop is measured over before a claim, in ms. */
const busyWindowMs = 1_000;
/** Above this share of its time busy, the event loop is saturated: CPU-bound bodies. */
const busyShare = 0.9;

/**
 * A worker's room to run node bodies: `concurrency` slots, each taken by a body and given back
 * once, and the wake-ups of its two loops (`tasks` when a slot freed, `runs` when a result it
 * wrote waits in its run's inbox). Agent nodes mostly wait on the network, so many slots fit
 * them; bodies that keep the event loop busy (CPU-bound work) are bounded by what the loop can
 * do: while it was saturated over the last second, a claim takes one task at a time however
 * many slots are free, so this worker does not hoard work it cannot start while other workers
 * could.
 *
 * @example
 * const slots = new Slots(100);
 * const room = slots.room(); // how many tasks to claim now
 */
export class Slots {
  readonly #concurrency: number;
  #running = 0;
  /** A nudge of the claim loop for freed slots is due at the end of this loop turn. */
  #freed = false;
  readonly #waiting: Record<WorkKind, Set<() => void>> = { runs: new Set(), tasks: new Set() };
  readonly #nudged: Record<WorkKind, number> = { runs: 0, tasks: 0 };
  #utilization = performance.eventLoopUtilization();
  #measuredAt = performance.now();
  #saturated = false;

  constructor(concurrency: number) {
    this.#concurrency = concurrency;
  }

  /** Bodies running now. */
  get running(): number {
    return this.#running;
  }

  /** How many tasks a claim may take now: the free slots, or one while the event loop is saturated. */
  room(): number {
    const free = this.#concurrency - this.#running;
    if (free <= 0) return 0;
    return this.#busy() ? 1 : free;
  }

  /** Takes a slot, or none when all are taken. */
  take(): { held: boolean } | undefined {
    if (this.#running >= this.#concurrency) return undefined;
    this.#running++;
    return { held: true };
  }

  /** Counts a slot taken for a task a claim returned (the claim took at most `room()`). */
  claimed(): { held: boolean } {
    this.#running++;
    return { held: true };
  }

  /**
   * Gives a slot back, once, and has the claim loop look for more work once the timers and I/O
   * callbacks of this loop turn have run: the bodies that end together (a wave of branches whose
   * timers fire in one turn) free their slots for one claim, not one claim each. `quiet`: no
   * claim is needed for it now (the queue is known to be empty and news of new tasks comes).
   */
  free(slot: { held: boolean }, quiet = false): void {
    if (!slot.held) return;
    slot.held = false;
    this.#running--;
    if (this.#freed || quiet) return;
    this.#freed = true;
    setImmediate(() => {
      this.#freed = false;
      this.nudge('tasks');
    });
  }

  /** How often a loop of this kind was nudged so far: it looks again if one came meanwhile. */
  nudged(kind: WorkKind): number {
    return this.#nudged[kind];
  }

  /** Wakes the loop of this kind if it waits. */
  nudge(kind: WorkKind): void {
    this.#nudged[kind]++;
    for (const wake of this.#waiting[kind]) wake();
  }

  /** Registers a wake-up for the loop of this kind while it waits; returns the undo. */
  onNudge(kind: WorkKind, wake: () => void): () => void {
    this.#waiting[kind].add(wake);
    return () => this.#waiting[kind].delete(wake);
  }

  /** Whether the event loop was saturated over the last window (measured at most once a window). */
  #busy(): boolean {
    const now = performance.now();
    if (now - this.#measuredAt < busyWindowMs) return this.#saturated;
    const since = performance.eventLoopUtilization(this.#utilization);
    this.#utilization = performance.eventLoopUtilization();
    this.#measuredAt = now;
    this.#saturated = since.utilization > busyShare;
    return this.#saturated;
  }
}
