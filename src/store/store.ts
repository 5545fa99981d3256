/**
 * The persistence contract every store implements (memory, SQLite, PostgreSQL). Stores see
 * encoded data only: ids, numbers and JSON strings. Typing, validation and the meaning of the
 * JSON live one layer up, in the runtime, so every store stays small and behaves the same.
 *
 * History is event-sourced: each step of a run commits ONE row, its event (which carries the
 * node's update, so its size follows the update, not the state), in one transaction with the
 * run's new sequence number and status. Every K steps, and whenever the run stops, the commit
 * also carries a full snapshot. Loading reads the latest snapshot and the events after it.
 * A store keeps a run's first snapshot (rewind replays from it) and its newest (load starts from
 * it); the ones in between are dropped when a newer one is written, so storage grows with the
 * events, not with the number of snapshots times the state.
 */

/**
 * The on-disk format of runs, snapshots and events; bumped on any incompatible change.
 * 2: trace entries are stored as arrays of their fields (1: as objects, which is still read).
 */
export const storeFormatVersion = 2;

/** Every status a run can have, as stored; the same values as the runtime's `RunStatus`. */
export const storedStatuses = [
  'running',
  'waiting',
  'succeeded',
  'failed',
  'cancelled',
  'timed_out',
] as const;

/** A run's status as stored. */
export type StoredStatus = (typeof storedStatuses)[number];

/** One run's row. */
export interface RunRecord {
  readonly id: string;
  /** The graph's name, structural hash, version and state schema version at start. */
  readonly graph: string;
  readonly graphHash: string;
  readonly graphVersion: number;
  readonly stateVersion: number;
  /** {@link storeFormatVersion} of the data written for this run. */
  readonly format: number;
  readonly status: StoredStatus;
  /** Sequence number of the last commit; 0 right after `createRun`. */
  readonly seq: number;
  readonly createdAt: number;
  readonly updatedAt: number;
  /** JSON of the error value that stopped the run, if it stopped with one. */
  readonly error: string | null;
  /** JSON object of string labels given at start (the CLI records the graph file), or null. */
  readonly labels: string | null;
}

/** What `createRun` writes: the run row and its first snapshot (at sequence 0), atomically. */
export interface NewRun {
  readonly id: string;
  readonly graph: string;
  readonly graphHash: string;
  readonly graphVersion: number;
  readonly stateVersion: number;
  readonly createdAt: number;
  readonly status: StoredStatus;
  /** JSON of the initial snapshot. */
  readonly snapshot: string;
  /** JSON object of string labels; absent or null for none. */
  readonly labels?: string | null;
}

/** One step of a run: written atomically, or not at all. */
export interface Commit {
  /** Must be the run's current `seq` + 1, else the commit fails with STORE_CONFLICT. */
  readonly seq: number;
  readonly at: number;
  /** JSON of the event the runtime applied. */
  readonly event: string;
  /** JSON array of the trace entries of the attempts this event ended (the runtime's encoding), if any. */
  readonly trace: string | null;
  /** The run's status after the event. */
  readonly status: StoredStatus;
  /** JSON of the error value that stopped the run, when `status` is a stopped one. */
  readonly error: string | null;
  /** JSON of the full snapshot after the event: every K steps and whenever the run stops. */
  readonly snapshot: string | null;
}

/** A run as loaded to continue it: the latest snapshot and every event after it, in order. */
export interface LoadedRun {
  readonly run: RunRecord;
  readonly snapshot: { readonly seq: number; readonly data: string };
  readonly events: readonly StoredEvent[];
}

/** One committed event. */
export interface StoredEvent {
  readonly seq: number;
  readonly at: number;
  readonly event: string;
  readonly trace: string | null;
}

/** Which runs `listRuns` returns; newest first. */
export interface RunFilter {
  readonly status?: StoredStatus | readonly StoredStatus[];
  readonly graph?: string;
  readonly limit?: number;
}

/** The recorded result of an effect, under its idempotency key. */
export interface EffectRecord {
  readonly runId: string;
  readonly key: string;
  /** JSON of the effect's result. */
  readonly result: string;
  readonly at: number;
}

/** A stop point waiting for an outside answer (a person, an event). */
export interface WaitRecord {
  readonly runId: string;
  readonly requestId: string;
  readonly node: string;
  readonly activation: string;
  /** JSON of what is asked: prompt, answer schema. */
  readonly request: string;
  readonly openedAt: number;
  /** JSON of the answer, once given. */
  readonly answer: string | null;
  readonly answeredBy: string | null;
  readonly answeredAt: number | null;
}

/** A recorded node output, found again by node name, node version and input hash. */
export interface MemoRecord {
  readonly graph: string;
  readonly node: string;
  readonly nodeVersion: number;
  readonly inputHash: string;
  /** JSON of the output (the update the node returned). */
  readonly output: string;
  readonly runId: string;
  readonly activation: string;
  readonly at: number;
}

/** How much a run takes in the store. */
export interface RunUsage {
  readonly events: number;
  readonly eventBytes: number;
  readonly snapshots: number;
  readonly snapshotBytes: number;
}

/**
 * The store contract. Errors are WaymarkErrors: RUN_EXISTS, RUN_NOT_FOUND, STORE_CONFLICT (a
 * commit against a stale sequence number: never a silent overwrite), STORE_CORRUPT (a row that
 * cannot be read: that run's load fails, every other run stays usable), WAIT_NOT_FOUND,
 * WAIT_ALREADY_ANSWERED.
 *
 * @example
 * const store = new MemoryStore();
 * await run(g, input, { store });
 */
export interface Store {
  createRun(run: NewRun): Promise<void>;
  commit(runId: string, commit: Commit): Promise<void>;
  /** The run with its latest snapshot and the events after it; undefined if there is no such run. */
  loadRun(runId: string): Promise<LoadedRun | undefined>;
  getRun(runId: string): Promise<RunRecord | undefined>;
  /**
   * The latest kept snapshot at or before `seq` (a run always keeps the one at 0, and its newest);
   * undefined for no such run.
   */
  snapshotAt(
    runId: string,
    seq: number,
  ): Promise<{ readonly seq: number; readonly data: string } | undefined>;
  /** Runs matching the filter, newest first; a run whose row cannot be read is left out. */
  listRuns(filter?: RunFilter): Promise<RunRecord[]>;
  /** Committed events after `afterSeq` (default 0: all), in order. */
  events(runId: string, afterSeq?: number): Promise<StoredEvent[]>;
  usage(runId: string): Promise<RunUsage>;

  /** Records an effect's result unless the key has one already; returns the record that stands. */
  recordEffect(effect: EffectRecord): Promise<EffectRecord>;
  getEffect(runId: string, key: string): Promise<EffectRecord | undefined>;

  openWait(wait: WaitRecord): Promise<void>;
  /** Records the answer once; a second answer fails with WAIT_ALREADY_ANSWERED. */
  answerWait(
    runId: string,
    requestId: string,
    answer: string,
    by: string,
    at: number,
  ): Promise<WaitRecord>;
  listWaits(runId: string, options?: { readonly open?: boolean }): Promise<WaitRecord[]>;

  putMemo(memo: MemoRecord): Promise<void>;
  /** The most recent memo for this node, version and input hash, from any run of the graph. */
  findMemo(
    graph: string,
    node: string,
    nodeVersion: number,
    inputHash: string,
  ): Promise<MemoRecord | undefined>;

  close(): Promise<void>;
}
