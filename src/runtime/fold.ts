import { isWaymarkError } from '../error/waymark-error.js';
import type { CompiledGraph } from '../graph/compiled.js';
import type { Commit, Lease, Store, TaskRecord, WorkQueue } from '../store/store.js';
import type { Clock } from './clock.js';
import { commitExtras } from './commit-extras.js';
import type { Command, RunEvent, Snapshot } from './core/snapshot.js';
import { step } from './core/step.js';
import { currentSnapshot } from './current.js';
import type { Attempt } from './execute.js';
import { Journal } from './journal.js';
import { taskOf } from './task-input.js';
import { TraceRecorder } from './trace-recorder.js';
import { parse } from './values.js';
import { resumeEvents } from './waits.js';

/** What one fold did: the events it committed, and how the run stands after them. */
export interface Folded {
  readonly committed: number;
  readonly status: Snapshot['status'];
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
 * `step`, one commit per event, each fenced by seq and the lease's epoch. What a commit
 * schedules becomes tasks in the same transaction (the state each activation sees travels with
 * its task), what it cancels is deleted, and the inbox items it folded go with it. When the run
 * stops, the tasks still queued for it are cancelled. It runs no node body: workers claim tasks.
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
): Promise<Folded> {
  const runId = lease.runId;
  const loaded = await store.loadRun(runId);
  if (loaded === undefined) return { committed: 0, status: 'cancelled' };
  let snapshot = currentSnapshot(graph, loaded);
  // A fold commits a few events at a time: counting from the run's latest snapshot, not from
  // this fold, is what keeps a load replaying at most `every` events.
  const journal = new Journal(store, graph, runId, loaded.run.seq, clock, {
    epoch: lease.epoch,
    sinceSnapshot: loaded.events.length,
  });
  const trace = new TraceRecorder();
  const due = await dueItems(store, graph, snapshot, loaded.run.seq, clock.now());
  let committed = 0;
  let conflicts = 0;
  // Inbox items that changed nothing (a late attempt, a wake-up) leave with the next commit.
  const consumed: number[] = [];
  for (let i = 0; i < due.length; i++) {
    const { event, attempt, inboxId } = due[i]!;
    if (inboxId !== undefined && !consumed.includes(inboxId)) consumed.push(inboxId);
    if (event === undefined) continue;
    const result = step(graph, snapshot, event);
    if (result.snapshot === snapshot && result.commands.length === 0) continue;
    const now = clock.now();
    const own = trace.entryFor(result.outcome, event, attempt, now);
    try {
      await journal.record(event, result.snapshot, own === undefined ? [] : [own], {
        ...commitExtras(graph, event, snapshot, result.snapshot, result.commands, now),
        schedule: scheduleOf(graph, result.snapshot, result.commands, consumed),
      });
    } catch (error) {
      if (!isWaymarkError(error) || error.code !== 'STORE_CONFLICT') throw error;
      if (++conflicts > maxConflictsInARow) throw error;
      // Another process appended to the run (a cancellation): fold it in, take this event again.
      snapshot = await journal.catchUp(snapshot);
      i--;
      continue;
    }
    consumed.length = 0;
    conflicts = 0;
    snapshot = result.snapshot;
    committed++;
  }
  if (consumed.length > 0) await store.consume(runId, lease, consumed);
  return { committed, status: snapshot.status };
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
  now: number,
): Promise<Due[]> {
  const due: Due[] = [];
  if (seq === 0 && snapshot.status === 'running') due.push({ event: { type: 'started' } });
  for (const item of await store.inbox(snapshot.runId)) {
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

/** The tasks a commit schedules and cancels, and the inbox items it takes with it. */
function scheduleOf(
  graph: CompiledGraph,
  after: Snapshot,
  commands: readonly Command[],
  consumed: readonly number[],
): NonNullable<Commit['schedule']> {
  const tasks: TaskRecord[] = [];
  const cancel: string[] = [];
  for (const command of commands) {
    if (command.type === 'execute') tasks.push(taskOf(graph, after, command.activation));
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
    ...(consumed.length > 0 && { consumed: [...consumed] }),
  };
}
