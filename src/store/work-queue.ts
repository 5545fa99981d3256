/**
 * The work queue of a store that serves workers: runs and activations are rows a worker claims
 * in batches, each claim under a lease epoch that fences every write about it; leases expire by
 * the store's clock. An attempt's result goes to its run's inbox, not to the run's row, so that
 * a thousand branches finishing at once do not queue on one row: whoever holds the run folds the
 * inbox into its history. Three stores serve workers: PostgreSQL (many machines), SQLite (many
 * processes on one machine, sharing one file) and memory (one process, for tests). One
 * conformance suite (`workQueueConformance` in `waymark/testing`) holds each to it.
 *
 * Split by concern, so that each part of the worker asks for only what it uses.
 */

import type {
  ClaimedTask,
  Commit,
  FinishedTask,
  InboxRecord,
  Lease,
  LoadedRun,
  NewRun,
  RunGroup,
  Store,
  WorkClaim,
  WorkerRecord,
} from './store.js';

/** What a notification of new work is about: a task to claim, or a run with something to fold. */
export type WorkKind = 'tasks' | 'runs';

/** A run a worker claimed to fold, with what the fold reads. */
export type ClaimedRun = { readonly lease: Lease } & (
  | { readonly run: LoadedRun; readonly inbox: readonly InboxRecord[] }
  | { readonly error: unknown }
);

/** Which workers there are, the graphs each runs, and whether each is alive. */
export interface WorkerRegistry {
  /** Registers (or renews) a worker and the graphs it runs; alive `leaseMs` from now. */
  registerWorker(worker: {
    readonly id: string;
    readonly host: string;
    readonly pid: number;
    readonly graphs: WorkerRecord['graphs'];
    readonly leaseMs: number;
  }): Promise<void>;
  unregisterWorker(id: string): Promise<void>;
  listWorkers(): Promise<WorkerRecord[]>;
}

/** Runs a worker claims to fold, and how it records new runs and commits what it folded. */
export interface RunClaims {
  /**
   * Takes the lease of up to `limit` runs of these graphs that have something to fold (never
   * started, an inbox item, a due timer, or left running with no task queued) and no live
   * owner, each at epoch + 1, and for each run claimed what its fold reads (`loadRun`, `inbox`),
   * in one round trip. A run that cannot be read (damaged) comes with the error loading it would
   * throw.
   */
  claimAndLoadRuns(claim: WorkClaim): Promise<ClaimedRun[]>;
  /**
   * Commits consecutive steps of one run (a fold's) in one transaction, all or none: each
   * commit's seq follows the one before it, all under one epoch, and the group is fenced as one
   * commit is. What the group leaves is what committing them one by one would leave, but for
   * two stamps: a wait from before the group that it closes is closed at the group's last time,
   * and a task the group schedules twice has its epoch raised once.
   */
  commitAll(runId: string, commits: readonly Commit[]): Promise<void>;
  /**
   * Commits the steps of several runs at once (a worker's runs that stepped together), each
   * run's group fenced as `commitAll` fences it and holding or not on its own. Only plain
   * groups (`isPlainGroup`: no waits, timers or tasks). Returns, per group, whether it was
   * written; one that was not wrote nothing: commit it with `commitAll` to learn why (a
   * conflict, a lost lease).
   */
  commitRuns(groups: readonly RunGroup[]): Promise<boolean[]>;
  /**
   * Counts a failed fold of the run `lease` holds (its data cannot be read, or folding it
   * throws) and keeps the lease `retryInMs` longer, so that no worker claims the run again
   * before then; the run's count of failed folds so far, or 0 if the lease is no longer held.
   */
  foldFailed(lease: Lease, retryInMs: number): Promise<number>;
  /**
   * Ends the run `lease` holds as `failed` with the JSON error value `error`, without reading
   * its history (which may be what cannot be read), and drops its queued tasks, timers and
   * inbox; false if the lease is no longer held or the run has stopped.
   */
  failRun(lease: Lease, failure: { readonly error: string; readonly at: number }): Promise<boolean>;
  /**
   * Records many new runs at once, all or none (`enqueue`, `enqueueAll`). With `wake`, one
   * wake-up goes in the first run's inbox, which tells idle workers at once.
   * @throws WaymarkError `RUN_EXISTS` when one of them exists already, or is given twice.
   */
  createRuns(runs: readonly NewRun[], options?: { readonly wake?: boolean }): Promise<void>;
}

/** Activations as tasks: claimed, renewed, finished into the inbox, or given back. */
export interface TaskQueue {
  /** Takes up to `limit` due tasks of these graphs that no live lease holds, each at epoch + 1. */
  claimTasks(claim: WorkClaim): Promise<ClaimedTask[]>;
  /** Extends task leases in one call; those no longer held (cancelled, taken over) are lost. */
  renewTasks(
    tasks: readonly ClaimedTask[],
    leaseMs: number,
  ): Promise<{ readonly renewed: readonly ClaimedTask[]; readonly lost: readonly string[] }>;
  /**
   * Puts each attempt's result in its run's inbox and removes its task, in one transaction,
   * each fenced by its task's lease: false for one whose lease is no longer the task's, and
   * nothing written for it. The inbox takes them in the order given. Idle workers are woken
   * to fold them (`runs`) unless `wake` is false: a worker that folds what it finished says so
   * and folds them itself, rather than have every worker's claim race for the run.
   */
  finishTasks(
    finished: readonly FinishedTask[],
    options?: { readonly wake?: boolean },
  ): Promise<boolean[]>;
  /** Gives a claimed task back unrun (a draining worker), for another worker to claim at once. */
  releaseTask(task: ClaimedTask): Promise<void>;
  /**
   * The tasks queued for a run, with who holds each (owner `''` and expiry 0 for a task nobody
   * has claimed, or that was given back) and its epoch.
   */
  listTasks(runId: string): Promise<ClaimedTask[]>;
}

/**
 * Each run's inbox: what ended in it, waiting to be folded in. A store that is a work queue
 * writes a wake-up with every answer `answerWait` records, in the same transaction, so that an
 * answer recorded is never left unseen by a crash or a lost connection between the two.
 */
export interface Inbox {
  /** Asks for the run to be folded again (an answer was recorded): a wake-up in its inbox. */
  wake(runId: string, at: number): Promise<void>;
  /** A run's inbox, in arrival order. */
  inbox(runId: string): Promise<InboxRecord[]>;
  /**
   * Removes inbox items a fold read and found nothing to commit for (a late attempt, a wake-up),
   * fenced by the run's lease; items a commit folded go with that commit (`schedule.consumed`).
   */
  consume(runId: string, lease: Lease, ids: readonly number[]): Promise<void>;
}

/** How an idle worker learns of new work: told (PostgreSQL's NOTIFY, in process) or by polling. */
export interface WorkSignals {
  /**
   * Whether new tasks and inbox items are told to this store now: false for a store that can
   * only poll (SQLite, PostgreSQL with `notify: false`), or while its listening connection is
   * down. Only then may a worker whose claim found the queue empty wait for news instead of
   * claiming again as its slots free.
   */
  readonly listening: boolean;
  /**
   * How many notifications of one kind of work this store has had: read it before looking for
   * work and pass it to `waitForWork`, so that one which came while the caller was busy is not
   * lost.
   */
  notifiedOf(kind: WorkKind): number;
  /**
   * Resolves when there may be new work (a notification of `kind` after the `since`-th, or the
   * next one) or after `ms`, whichever comes first, or at once when `signal` aborts. Without
   * `kind` any notification counts (and `since` counts them all): a worker's claims of tasks
   * pass `tasks` and do not wake for an inbox item, nor its folds for a task.
   */
  waitForWork(ms: number, signal: AbortSignal, since?: number, kind?: WorkKind): Promise<void>;
}

/** Every part of a store that serves workers. */
export interface WorkQueue extends WorkerRegistry, RunClaims, TaskQueue, Inbox, WorkSignals {}

/**
 * Whether the store serves workers ({@link WorkQueue}): `waymark worker` and `enqueue` need
 * one; on one, a drained or answered run is handed to the workers through its inbox.
 *
 * @example
 * if (servesWorkers(store)) await store.wake(runId, Date.now());
 */
export function servesWorkers(store: Store): store is Store & WorkQueue {
  const queue = store as Partial<WorkQueue>;
  return (
    typeof queue.claimAndLoadRuns === 'function' &&
    typeof queue.claimTasks === 'function' &&
    typeof queue.wake === 'function' &&
    typeof queue.waitForWork === 'function'
  );
}
