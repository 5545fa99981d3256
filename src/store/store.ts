import type { RunRemoval } from './run-removal.js';

/**
 * The persistence contract every store implements (memory, SQLite, PostgreSQL), split by
 * concern: the run log, run ownership (leases), timers, effects, waits, memos and the memory
 * items kept across runs. Stores see encoded data only: ids, numbers and JSON strings. Typing,
 * validation and the meaning of the JSON live one layer up, in the runtime, so every store
 * stays small and behaves the same. One conformance suite (`storeConformance` in
 * `waymark/testing`) holds every store to it.
 *
 * History is event-sourced: each step of a run commits ONE row, its event (which carries the
 * node's update, so its size follows the update, not the state), in one transaction with the
 * run's new sequence number and status. Every K steps, and whenever the run stops, the commit
 * also carries a full snapshot. Loading reads the latest snapshot and the events after it.
 * A store keeps a run's first snapshot (rewind replays from it) and its newest (load starts from
 * it); the ones in between are dropped when a newer one is written, so storage grows with the
 * events, not with the number of snapshots times the state.
 */

import type { RunLimit } from './limits.js';
import type { ScheduleStore } from './schedule-store.js';

/**
 * The on-disk format of runs, snapshots and events; bumped on any incompatible change.
 * 3: a completion records the attempt it ended and its update as parsed (a replay parses
 * nothing again), and state values JSON cannot hold (a Date) are stored tagged.
 * 2: trace entries are stored as arrays of their fields (1: as objects). Both are still read.
 */
export const storeFormatVersion = 3;

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
  /** Who drives the run, or last drove it: null for a run nobody ever took a lease on. */
  readonly lease: LeaseRecord | null;
}

/** A run's lease as stored, with whether it is live by the store's clock. */
export interface LeaseRecord {
  readonly owner: string;
  /** The owner's host name and process id, when it gave them: enough to tell it died. */
  readonly host: string | null;
  readonly pid: number | null;
  /** Bumped each time the run changes owner; every commit of the owner is fenced by it. */
  readonly epoch: number;
  /** Ms since the epoch by the store's clock; 0 once released. */
  readonly expiresAt: number;
  /** Held: not released, and not past `expiresAt` by the store's clock when it was read. */
  readonly live: boolean;
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
  /**
   * Runs this one reads recorded outputs from (`reuseFrom`, a rewind's source): refused deletion
   * (RUN_REFERENCED) while this run has not finished. Absent: none.
   */
  readonly sources?: readonly string[];
  /** The run's concurrency limit (limits.ts): admitted, or queued `waiting`, as it is created. */
  readonly limit?: RunLimit;
}

/** One step of a run: written atomically, or not at all, with what it opens, closes and sets. */
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
  /**
   * The lease epoch the commit is made under: refused with LEASE_LOST unless it is the run's
   * current one, so the commits of an owner whose run was taken over never land. Absent (or
   * null) only for what any process may append to a run it does not drive, a cancellation:
   * that is fenced by `seq` alone, and the owner meets it as a conflict at its next commit.
   */
  readonly epoch?: number | null;
  /**
   * The commit's lease (its `epoch`) is given up with it: the last commit of a driver that
   * stops, so that another process may take the run at once, with no write of its own.
   */
  readonly release?: boolean;
  /** Waits the step opened, and waits it closed (by request id) without an answer. */
  readonly waits?: {
    readonly open?: readonly WaitRecord[];
    readonly close?: readonly string[];
  };
  /** Timers the step set (replacing one of the same id), and timers it cleared (by id). */
  readonly timers?: {
    readonly set?: readonly TimerRecord[];
    readonly clear?: readonly string[];
  };
  /**
   * For a store that serves workers (`WorkQueue`, work-queue.ts): the activations the step schedules, as
   * tasks any worker may claim; the activations it cancels (their tasks are deleted, and a worker
   * still running one loses its lease); and the inbox items it folded (deleted). Written in the
   * commit's transaction. A store without a work queue has its runs driven in process and
   * ignores it: the run's checkpoint lists its pending activations all the same.
   */
  readonly schedule?: {
    readonly tasks?: readonly TaskRecord[];
    readonly cancel?: readonly string[];
    readonly consumed?: readonly number[];
  };
}

/** An activation a commit scheduled, for whichever worker claims it. */
export interface TaskRecord {
  readonly runId: string;
  /** The activation's id: with the run, the task's key. */
  readonly activation: string;
  readonly attempt: number;
  readonly node: string;
  /** The graph (name and structural hash) a worker needs to run it. */
  readonly graph: string;
  readonly graphHash: string;
  /** Ms since the epoch: not before (a retry's backoff); null: at once. */
  readonly notBefore: number | null;
  /** JSON of what the attempt needs: the activation, the state it sees, its item, the run's errors, spend and limits. */
  readonly input: string;
}

/** A task a worker claimed: its lease fences what the worker writes about it. */
export interface ClaimedTask extends TaskRecord {
  readonly owner: string;
  readonly epoch: number;
  readonly expiresAt: number;
}

/** Consecutive commits of one run, as `commitAll` takes them: one of `commitRuns`' groups. */
export interface RunGroup {
  readonly runId: string;
  readonly commits: readonly Commit[];
}

/**
 * Whether commits touch only the run's head, its events and snapshots and its inbox: no waits,
 * timers, or tasks to schedule or cancel. What `commitRuns` takes.
 */
export function isPlainGroup(commits: readonly Commit[]): boolean {
  return commits.every(
    (c) =>
      (c.waits === undefined ||
        ((c.waits.open?.length ?? 0) === 0 && (c.waits.close?.length ?? 0) === 0)) &&
      (c.timers === undefined ||
        ((c.timers.set?.length ?? 0) === 0 && (c.timers.clear?.length ?? 0) === 0)) &&
      (c.schedule === undefined ||
        ((c.schedule.tasks?.length ?? 0) === 0 && (c.schedule.cancel?.length ?? 0) === 0)),
  );
}

/** A claimed task's attempt that ended: its result (JSON of the attempt) and when it ended. */
export interface FinishedTask {
  readonly task: ClaimedTask;
  readonly attempt: string;
  readonly at: number;
}

/** What ended in a run, waiting for its orchestrator to fold it in: an attempt, or a wake-up. */
export interface InboxRecord {
  /** Arrival order within the store. */
  readonly id: number;
  readonly runId: string;
  /** JSON of the attempt (its event and timing); null for a wake-up (a wait was answered). */
  readonly attempt: string | null;
  readonly at: number;
}

/** A worker as registered: who it is, the graphs it runs, and whether it is alive. */
export interface WorkerRecord {
  readonly id: string;
  readonly host: string;
  readonly pid: number;
  readonly graphs: readonly { readonly name: string; readonly hash: string }[];
  /** Ms since the epoch by the store's clock: alive until then unless it registers again. */
  readonly expiresAt: number;
  readonly live: boolean;
}

/** What a worker claims work with: its identity, the graphs it runs, how much, how long. */
export interface WorkClaim extends LeaseClaim {
  readonly graphs: readonly { readonly name: string; readonly hash: string }[];
  readonly limit: number;
}

/**
 * Something due at a time, kept with its run so whoever drives the run next, or a worker
 * looking for due work, finds it: a wait's timeout, the run's deadline.
 */
export interface TimerRecord {
  readonly runId: string;
  /** Unique within the run: `deadline`, `wait:<request id>`. */
  readonly id: string;
  /** Ms since the epoch. */
  readonly at: number;
}

/** What a process claims a run's lease with. */
export interface LeaseClaim {
  /** Unique per driver (host, process and a random part): two drivers never share one. */
  readonly owner: string;
  readonly host?: string | null;
  readonly pid?: number | null;
  /** How long the lease lasts unless renewed, from the store's clock. */
  readonly leaseMs: number;
  /**
   * Take the run over although its lease is live, because its owner is known to be dead (same
   * host, no such process): only if the lease's epoch is still this one, so that of two
   * processes taking over the same dead owner's run, one wins.
   */
  readonly takeOver?: number;
}

/** A lease held: the run, its owner, the epoch its commits are fenced by, and its expiry. */
export interface Lease {
  readonly runId: string;
  readonly owner: string;
  readonly epoch: number;
  readonly expiresAt: number;
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
  /** Only runs that carry every one of these labels, with these values (a thread's runs). */
  readonly labels?: Readonly<Record<string, string>>;
  /**
   * Only runs after this one in the listing's order (older, or as old with a smaller id): the
   * next page after a page's last run. A keyset, so pages neither skip nor repeat a run while
   * new runs are created.
   */
  readonly before?: RunPosition;
  /** Only runs created at or after this time (ms since the epoch). */
  readonly since?: number;
  /** Only runs created before this time (ms since the epoch). */
  readonly until?: number;
  readonly limit?: number;
}

/** A run's place in a listing: newest first, then by id, descending. */
export interface RunPosition {
  readonly createdAt: number;
  readonly id: string;
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
  /**
   * When the wait was closed unanswered because nothing will ever apply an answer (its branch
   * was cancelled by a join, the run was cancelled); an answer is then refused with WAIT_CLOSED.
   */
  readonly closedAt?: number | null;
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
 * The run log: runs, their event-sourced history and snapshots. Errors: RUN_EXISTS,
 * RUN_NOT_FOUND, STORE_CONFLICT (a commit against a stale sequence number: never a silent
 * overwrite), LEASE_LOST (a commit under an epoch that is no longer the run's), STORE_CORRUPT
 * (a row that cannot be read: that run's load fails, every other run stays usable).
 */
export interface RunLog {
  createRun(run: NewRun): Promise<void>;
  /** Appends one step, with the waits and timers it carries, in one transaction. */
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
}

/**
 * One owner per run. A lease names the owner, an epoch and an expiry by the store's clock (never
 * a caller's). A live lease refuses a second owner with RUN_OWNED (details: the owner, its host
 * and pid, its epoch and `expiresAt`); an expired or released one is taken with epoch + 1, after
 * which the old owner's commits are refused (LEASE_LOST).
 */
export interface RunOwnership {
  /** Takes the run's lease, or renews it for the same owner. */
  acquire(runId: string, claim: LeaseClaim): Promise<Lease>;
  /**
   * Extends many leases in one call (a worker renews what it holds in a batch, not one round
   * trip per run). A lease whose epoch or owner is no longer the run's is lost: the caller must
   * stop that run's work.
   */
  renew(
    leases: readonly Lease[],
    leaseMs: number,
  ): Promise<{ readonly renewed: readonly Lease[]; readonly lost: readonly string[] }>;
  /** Gives the lease up (a stopped run, a draining worker): anyone may take the run at once. */
  release(lease: Lease): Promise<void>;
}

/**
 * A store that tells its watchers when a run commits, so that `watch()` waits for a commit
 * instead of reading the store in a loop. Optional: `watch()` polls a store without it.
 */
export interface RunCommits {
  /** Starts telling of the run's commits; `close()` the follower when done. */
  followCommits(runId: string): Promise<CommitFollower>;
}

/** What {@link RunCommits.followCommits} gives: waits for a run's next commit. */
export interface CommitFollower {
  /** Commits told so far: pass it to `next`, so that one told while the caller read is not lost. */
  readonly told: number;
  /** Whether commits are told as they land; false: `next` waits `ms` (a poll). */
  readonly live: boolean;
  /**
   * Resolves after a commit told after the `since`-th, or after `ms`, whichever comes first,
   * or at once when `signal` aborts.
   */
  next(since: number, ms: number, signal?: AbortSignal): Promise<void>;
  close(): Promise<void>;
}

/** Whether the store tells its watchers of commits ({@link RunCommits}). */
export function followsCommits(store: Store): store is Store & RunCommits {
  return typeof (store as Partial<RunCommits>).followCommits === 'function';
}

/** Timers commits set: listed per run, and across runs by when they are due. */
export interface TimerStore {
  listTimers(runId: string): Promise<TimerRecord[]>;
  /** Timers due at or before `at`, soonest first. */
  dueTimers(at: number, limit?: number): Promise<TimerRecord[]>;
  /**
   * When the soonest timer due after `after` is due, across runs, or undefined if none is:
   * how long an idle worker may wait before something comes due. Timers already due are left
   * out, so one nobody here can take never keeps a poller awake.
   */
  nextTimerAt(after: number): Promise<number | undefined>;
}

/** The effect ledger: one recorded result per idempotency key. */
export interface EffectStore {
  /** Records an effect's result unless the key has one already; returns the record that stands. */
  recordEffect(effect: EffectRecord): Promise<EffectRecord>;
  getEffect(runId: string, key: string): Promise<EffectRecord | undefined>;
  /** Every effect the run recorded, in the order they were recorded (by time, then key). */
  listEffects(runId: string): Promise<EffectRecord[]>;
}

/** Waits for an outside answer. Errors: WAIT_NOT_FOUND, WAIT_ALREADY_ANSWERED, WAIT_CLOSED. */
export interface WaitStore {
  /** Records a wait outside a commit (one a crash left unrecorded); re-opening keeps the first. */
  openWait(wait: WaitRecord): Promise<void>;
  /** Records the answer once; a second answer fails with WAIT_ALREADY_ANSWERED. */
  answerWait(
    runId: string,
    requestId: string,
    answer: string,
    by: string,
    at: number,
  ): Promise<WaitRecord>;
  /** `open: true`: neither answered nor closed; `open: false`: answered or closed. */
  listWaits(runId: string, options?: { readonly open?: boolean }): Promise<WaitRecord[]>;
}

/** Recorded node outputs, found again by node name, node version and input hash. */
export interface MemoStore {
  putMemo(memo: MemoRecord): Promise<void>;
  /** The most recent memo for this node, version and input hash, from any run of the graph. */
  findMemo(
    graph: string,
    node: string,
    nodeVersion: number,
    inputHash: string,
  ): Promise<MemoRecord | undefined>;
  /**
   * Forgets the memos of a graph, or of one of its nodes (a node's `cache`): later runs find
   * none of them. Resolves with how many were forgotten.
   */
  clearMemos(graph: string, node?: string): Promise<number>;
}

/** A value a search filter compares a top-level field of an item's value with. */
export type ItemScalar = string | number | boolean | null;

/**
 * One item of the memory store kept across runs (LangGraph's `BaseStore` item): a JSON value
 * under a namespace (a path of parts, `['users', 'u1', 'prefs']`) and a key. Times are ms since
 * the epoch by the store's clock.
 */
export interface ItemRecord {
  readonly namespace: readonly string[];
  readonly key: string;
  /** JSON of the value. */
  readonly value: string;
  readonly createdAt: number;
  readonly updatedAt: number;
  /** When it stops being returned, by the store's clock; null: never. */
  readonly expiresAt: number | null;
}

/** What `putItem` writes. */
export interface NewItem {
  readonly namespace: readonly string[];
  readonly key: string;
  /** JSON of the value. */
  readonly value: string;
  /** Expires this long after the put, by the store's clock; absent or null: never. */
  readonly ttlMs?: number | null;
}

/** Which items `searchItems` returns: by namespace, then key, in byte order of their text. */
export interface ItemSearch {
  /** Items whose namespace starts with these parts (whole parts: `['a']` is not a prefix of `['ab']`); `[]`: all. */
  readonly prefix: readonly string[];
  /** Only items whose value is an object with each of these top-level fields equal to the given scalar. */
  readonly filter?: Readonly<Record<string, ItemScalar>>;
  /** At most this many (default: all). */
  readonly limit?: number;
  /** After skipping this many matches (default 0). */
  readonly offset?: number;
}

/**
 * The memory store kept across runs: namespaced items with an optional time to live. An item
 * past its `expiresAt` is never returned and may be deleted at any time. Errors: MEMORY_INVALID
 * (an empty namespace, an empty part or key, a part or key with U+0000 or a lone surrogate, a
 * ttlMs that is not a number > 0).
 */
export interface ItemStore {
  /** Writes the item, replacing one under the same namespace and key (whose createdAt it keeps). */
  putItem(item: NewItem): Promise<ItemRecord>;
  getItem(namespace: readonly string[], key: string): Promise<ItemRecord | undefined>;
  searchItems(search: ItemSearch): Promise<ItemRecord[]>;
  /** Deletes the item; whether there was a live one. */
  deleteItem(namespace: readonly string[], key: string): Promise<boolean>;
  /** The namespaces that hold a live item, under `prefix` (`[]`: all), each once, in the order of a search. */
  listItemNamespaces(prefix: readonly string[]): Promise<string[][]>;
}

/**
 * The store contract: every concern above, and closing.
 *
 * @example
 * const store = new MemoryStore();
 * await run(g, input, { store });
 */
export interface Store
  extends RunLog,
    RunOwnership,
    TimerStore,
    EffectStore,
    WaitStore,
    MemoStore,
    ItemStore,
    ScheduleStore,
    RunRemoval {
  close(): Promise<void>;
}
