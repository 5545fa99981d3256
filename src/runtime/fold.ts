import type { CompiledGraph } from '../graph/compiled.js';
import type { InboxRecord, Lease, LoadedRun, Store, WorkQueue } from '../store/store.js';
import type { Clock } from './clock.js';
import type { Snapshot } from './core/snapshot.js';
import type { Attempt } from './execute.js';
import { type Booked, type Due, FoldBook } from './fold-book.js';
import { HeldRun, type Slot } from './held-run.js';
import type { RunCommitter } from './run-committer.js';
import { parse } from './values.js';
import { resumeEvents } from './waits.js';

/** What one fold did: the events it committed, and how the run stands after them. */
export interface Folded {
  readonly committed: number;
  readonly status: Snapshot['status'];
  /** The run's lease was given up with the fold's commit: the caller has nothing to release. */
  readonly released: boolean;
  /**
   * The run's sole next activation, which the caller said it runs itself (`hold`): the caller
   * drives the run on with it, still holding the run's lease.
   */
  readonly held?: HeldRun;
}

/** Options of {@link foldRun}. */
export interface FoldOptions {
  /**
   * Asked when a fold leaves the run with one activation to run and nothing else in flight: a
   * slot if the caller runs it itself, under the run's lease, instead of queueing it as a task
   * (a worker with room). See {@link HeldRun}.
   */
  readonly hold?: () => Slot | undefined;
  /** Where the fold's commits go: a worker's {@link RunCommitter}; by default, the store. */
  readonly committer?: Pick<WorkQueue, 'commitAll'>;
}

/**
 * The orchestrator of a run served by workers: under the run's lease, it folds what is due
 * (the start of a run that was enqueued, the attempts in its inbox in arrival order, a passed
 * deadline, answers and wait timeouts, or, for a run whose driver died, a resume) through
 * `step`, and commits every event that changed something in one transaction, fenced by seq and
 * the lease's epoch, giving the lease up with it. What a step schedules becomes tasks in that
 * transaction (the state each activation sees travels with its task), what it cancels is
 * deleted, and the inbox items folded go with it. When the run stops, the tasks still queued for
 * it are cancelled. It runs no node body itself; with `hold`, the caller may run the run's sole
 * next activation (`Folded.held`). `read` is the run and its inbox as the caller read them
 * under the lease, if it did.
 * @throws WaymarkError `LEASE_LOST` when another worker took the run over; `STORE_*`.
 *
 * @example
 * for (const lease of await store.claimRuns(claim)) await foldRun(store, graph, lease, clock);
 */
export async function foldRun(
  store: Store & WorkQueue,
  graph: CompiledGraph,
  lease: Lease,
  clock: Clock,
  read?: { readonly run: LoadedRun; readonly inbox: readonly InboxRecord[] },
  options: FoldOptions = {},
): Promise<Folded> {
  const runId = lease.runId;
  const run = read?.run ?? (await store.loadRun(runId));
  if (run === undefined) return { committed: 0, status: 'cancelled', released: false };
  const book = new FoldBook(store, graph, lease, clock, run, options.committer);
  const inbox = read?.inbox ?? (await store.inbox(runId));
  book.add(await dueItems(store, graph, book.after, run.run.seq, inbox, clock.now()));
  const next = options.hold === undefined ? undefined : book.soleNext();
  const slot = next === undefined ? undefined : options.hold!();
  // A run's start alone waits for its first activation's end: one commit for both.
  if (slot !== undefined && book.onlyStart) {
    return {
      committed: 0,
      status: book.after.status,
      released: false,
      held: new HeldRun(book, next!, slot),
    };
  }
  let booked: Booked;
  try {
    booked = await book.commit(slot === undefined ? undefined : next);
  } catch (error) {
    slot?.free();
    throw error;
  }
  if (slot !== undefined && booked.kept === undefined) slot.free();
  return {
    committed: booked.committed,
    status: book.after.status,
    released: booked.released,
    ...(booked.kept !== undefined && { held: new HeldRun(book, booked.kept, slot!) }),
  };
}

/**
 * What a fold owes a run now: its start, its inbox, what is due by time, and for a run left
 * `running` with nothing queued (its in-process driver died), a resume that schedules its
 * pending activations as tasks.
 */
async function dueItems(
  store: Store & WorkQueue,
  graph: CompiledGraph,
  snapshot: Snapshot,
  seq: number,
  inbox: readonly InboxRecord[],
  now: number,
): Promise<Due[]> {
  const due: Due[] = [];
  if (seq === 0 && snapshot.status === 'running') due.push({ event: { type: 'started' } });
  for (const item of inbox) {
    if (item.attempt === null) {
      due.push({ inboxId: item.id });
      continue;
    }
    const attempt = parse(item.attempt) as Attempt;
    due.push({ event: attempt.event, attempt, inboxId: item.id });
  }
  for (const event of await resumeEvents(store, graph, snapshot, now)) due.push({ event });
  const orphaned =
    due.length === 0 &&
    seq > 0 &&
    snapshot.status === 'running' &&
    (await store.listTasks(snapshot.runId)).length === 0;
  if (orphaned) due.push({ event: { type: 'resumed' } });
  return due;
}
