import { isWaymarkError } from '../error/waymark-error.js';
import type { CompiledGraph } from '../graph/compiled.js';
import type {
  Commit,
  InboxRecord,
  Lease,
  LoadedRun,
  Store,
  TaskRecord,
  WorkQueue,
} from '../store/store.js';
import type { Clock } from './clock.js';
import { commitExtras } from './commit-extras.js';
import type { Command, RunEvent, Snapshot } from './core/snapshot.js';
import { step } from './core/step.js';
import { currentSnapshot } from './current.js';
import type { Attempt } from './execute.js';
import { Journal, type JournalStep } from './journal.js';
import { taskOf } from './task-input.js';
import { storedTraceparent } from './trace-context.js';
import { TraceRecorder } from './trace-recorder.js';
import { parse } from './values.js';
import { resumeEvents } from './waits.js';

/** What one fold did: the events it committed, and how the run stands after them. */
export interface Folded {
  readonly committed: number;
  readonly status: Snapshot['status'];
  /** The run's lease was given up with the fold's commit: the caller has nothing to release. */
  readonly released: boolean;
}

interface Due {
  readonly event?: RunEvent;
  readonly attempt?: Attempt;
  readonly inboxId?: number;
}

const maxConflictsInARow = 100;

/**
 * The orchestrator of a run served by workers: under the run's lease, it folds what is due
 * (the start of a run that was enqueued, the attempts in its inbox in arrival order, a passed
 * deadline, answers and wait timeouts, or, for a run whose driver died, a resume) through
 * `step`, and commits every event that changed something in one transaction, fenced by seq and
 * the lease's epoch, giving the lease up with it. What a step schedules becomes tasks in that
 * transaction (the state each activation sees travels with its task), what it cancels is
 * deleted, and the inbox items folded go with it. When the run stops, the tasks still queued for
 * it are cancelled. It runs no node body: workers claim tasks. `read` is the run and its inbox
 * as the caller read them under the lease, if it did.
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
): Promise<Folded> {
  const runId = lease.runId;
  const run = read?.run ?? (await store.loadRun(runId));
  if (run === undefined) return { committed: 0, status: 'cancelled', released: false };
  let snapshot = currentSnapshot(graph, run);
  // Counting from the run's latest snapshot, not from this fold, is what keeps a load
  // replaying at most `every` events however few each fold commits.
  const journal = new Journal(store, graph, runId, run.run.seq, clock, {
    epoch: lease.epoch,
    sinceSnapshot: run.events.length,
  });
  // A fold is bookkeeping, not a segment: it keeps the run's trace context as it found it, for
  // the snapshots it writes and for the tasks it schedules (their worker spans' parent).
  const traceparent = storedTraceparent(run.snapshot.data);
  journal.keepTrace(traceparent, false);
  const inbox = read?.inbox ?? (await store.inbox(runId));
  const due = await dueItems(store, graph, snapshot, run.run.seq, inbox, clock.now());
  for (let conflicts = 0; ; conflicts++) {
    const { steps, consumed, after } = stepAll(graph, snapshot, due, clock, traceparent);
    try {
      if (steps.length > 0) await journal.recordAll(store, steps, true);
      else if (consumed.length > 0) await store.consume(runId, lease, consumed);
      return { committed: steps.length, status: after.status, released: steps.length > 0 };
    } catch (error) {
      if (!isWaymarkError(error) || error.code !== 'STORE_CONFLICT') throw error;
      if (conflicts >= maxConflictsInARow) throw error;
      // Another process appended to the run (a cancellation): fold it in, take ours again.
      snapshot = await journal.catchUp(snapshot);
    }
  }
}

/**
 * The steps `due` takes the run through from `snapshot`, each that changed something with what
 * its commit carries; the inbox items read go with the last of them (one transaction), or are
 * only consumed when none changed anything (a late attempt, a wake-up).
 */
function stepAll(
  graph: CompiledGraph,
  snapshot: Snapshot,
  due: readonly Due[],
  clock: Clock,
  traceparent: string | undefined,
): { steps: JournalStep[]; consumed: number[]; after: Snapshot } {
  const trace = new TraceRecorder();
  const steps: JournalStep[] = [];
  const consumed: number[] = [];
  let current = snapshot;
  for (const { event, attempt, inboxId } of due) {
    if (inboxId !== undefined && !consumed.includes(inboxId)) consumed.push(inboxId);
    if (event === undefined) continue;
    const result = step(graph, current, event);
    if (result.snapshot === current && result.commands.length === 0) continue;
    const now = clock.now();
    const own = trace.entryFor(result.outcome, event, attempt, now);
    steps.push({
      event,
      after: result.snapshot,
      trace: own === undefined ? [] : [own],
      extras: {
        ...commitExtras(graph, event, current, result.snapshot, result.commands, now),
        schedule: scheduleOf(graph, result.snapshot, result.commands, traceparent),
      },
    });
    current = result.snapshot;
  }
  const last = steps.at(-1);
  if (last !== undefined && consumed.length > 0) {
    const schedule = { ...last.extras?.schedule, consumed };
    steps[steps.length - 1] = { ...last, extras: { ...last.extras, schedule } };
  }
  return { steps, consumed, after: current };
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

/** The tasks a commit schedules and cancels. */
function scheduleOf(
  graph: CompiledGraph,
  after: Snapshot,
  commands: readonly Command[],
  traceparent: string | undefined,
): NonNullable<Commit['schedule']> {
  const tasks: TaskRecord[] = [];
  const cancel: string[] = [];
  for (const command of commands) {
    if (command.type === 'execute')
      tasks.push(taskOf(graph, after, command.activation, traceparent));
    else if (command.type === 'abort') cancel.push(...command.activations);
  }
  // A run that stopped runs nothing more: what is still queued for it is cancelled (its pending
  // activations stay in the checkpoint, for a resume to schedule again).
  if (after.status !== 'running' && after.status !== 'waiting') {
    for (const a of after.pending) if (!cancel.includes(a.id)) cancel.push(a.id);
  }
  return {
    ...(tasks.length > 0 && { tasks }),
    ...(cancel.length > 0 && { cancel }),
  };
}
