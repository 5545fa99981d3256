import type { Store } from '../store/store.js';
import type { Clock } from './clock.js';
import { encodeEvent, encodeSnapshot, encodeTrace } from './codec.js';
import type { RunEvent, Snapshot } from './core/snapshot.js';
import type { TraceEntry } from './trace.js';

/** Default number of events between two full snapshots. */
export const defaultSnapshotEvery = 100;

/**
 * Writes a run's history to a store: one commit per step, holding the event (whose size follows
 * the node's update, not the state), the trace entries it ended, and the run's new status; a
 * full snapshot every `snapshotEvery` events and whenever the run stops, so a load replays at
 * most that many events through `step`.
 */
export class Journal {
  readonly #store: Store;
  readonly #runId: string;
  readonly #clock: Clock;
  readonly #every: number;
  #seq: number;
  #sinceSnapshot = 0;

  constructor(
    store: Store,
    runId: string,
    seq: number,
    clock: Clock,
    every = defaultSnapshotEvery,
  ) {
    this.#store = store;
    this.#runId = runId;
    this.#seq = seq;
    this.#clock = clock;
    this.#every = every;
  }

  /** Records a new run with its initial snapshot (sequence 0). */
  static async create(
    store: Store,
    snapshot: Snapshot,
    clock: Clock,
    every?: number,
    labels?: Readonly<Record<string, string>>,
  ): Promise<Journal> {
    const { graph } = snapshot;
    await store.createRun({
      id: snapshot.runId,
      graph: graph.name,
      graphHash: graph.hash,
      graphVersion: graph.version,
      stateVersion: graph.stateVersion,
      createdAt: clock.now(),
      status: snapshot.status,
      snapshot: encodeSnapshot(snapshot),
      labels: labels === undefined ? null : JSON.stringify(labels),
    });
    return new Journal(store, snapshot.runId, 0, clock, every);
  }

  /** Commits one step; rejects (and records nothing) on a conflict or a store failure. */
  async record(event: RunEvent, after: Snapshot, trace: readonly TraceEntry[]): Promise<void> {
    this.#sinceSnapshot++;
    const stopped = after.status !== 'running';
    const snapshot = stopped || this.#sinceSnapshot >= this.#every ? encodeSnapshot(after) : null;
    await this.#store.commit(this.#runId, {
      seq: this.#seq + 1,
      at: this.#clock.now(),
      event: encodeEvent(event),
      trace: encodeTrace(trace),
      status: after.status,
      error: 'error' in after ? JSON.stringify(after.error) : null,
      snapshot,
    });
    this.#seq++;
    if (snapshot !== null) this.#sinceSnapshot = 0;
  }
}
