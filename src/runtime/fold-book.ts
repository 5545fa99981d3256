import { isWaymarkError } from '../error/waymark-error.js';
import type { CompiledGraph } from '../graph/compiled.js';
import type { Commit, Lease, LoadedRun, Store, TaskRecord, WorkQueue } from '../store/store.js';
import type { Clock } from './clock.js';
import { commitExtras } from './commit-extras.js';
import type { Activation, Command, RunEvent, Snapshot } from './core/snapshot.js';
import { step } from './core/step.js';
import { currentSnapshot } from './current.js';
import type { Attempt } from './execute.js';
import { Journal, type JournalStep } from './journal.js';
import { type TaskInput, taskInputFor, taskOf } from './task-input.js';
import { storedTraceparent } from './trace-context.js';
import { TraceRecorder } from './trace-recorder.js';

/** Something a fold steps the run through: an event, the attempt it ends, the inbox item it came in. */
export interface Due {
  readonly event?: RunEvent;
  readonly attempt?: Attempt;
  readonly inboxId?: number;
}

/** What one commit of a book did. */
export interface Booked {
  readonly committed: number;
  /** The lease was given up with the commit: the caller has nothing to release. */
  readonly released: boolean;
  /** The activation the caller keeps running itself, still under the lease; none if it may not. */
  readonly kept?: Activation;
}

interface Stepped extends JournalStep {
  readonly commands: readonly Command[];
}

const maxConflictsInARow = 100;

/**
 * The uncommitted steps of a run held under its lease by a worker: what it folded (inbox items,
 * a start, timers) and what the activations it ran itself ended in, stepped through `step` on
 * top of the run's last commit, and committed in one transaction, fenced by seq and epoch. A
 * conflict (a cancellation from another process) is caught up with and the same items are
 * stepped again on top of it. The tasks a commit schedules are built at commit time, so an
 * activation the worker keeps for itself never becomes a task row.
 */
export class FoldBook {
  readonly #store: Store & WorkQueue;
  readonly #committer: Pick<WorkQueue, 'commitAll'>;
  readonly #graph: CompiledGraph;
  readonly #lease: Lease;
  readonly #clock: Clock;
  readonly #journal: Journal;
  readonly #traceparent: string | undefined;
  readonly #trace = new TraceRecorder();
  /** The run as of the journal's last commit. */
  #base: Snapshot;
  #due: Due[] = [];
  #steps: Stepped[] = [];
  #consumed: number[] = [];
  /** The activations (`id#attempt`) the worker ran itself since the base: never tasks. */
  #ran = new Set<string>();
  #after: Snapshot;

  constructor(
    store: Store & WorkQueue,
    graph: CompiledGraph,
    lease: Lease,
    clock: Clock,
    run: LoadedRun,
    committer: Pick<WorkQueue, 'commitAll'> = store,
  ) {
    this.#store = store;
    this.#committer = committer;
    this.#graph = graph;
    this.#lease = lease;
    this.#clock = clock;
    this.#base = currentSnapshot(graph, run);
    this.#after = this.#base;
    // Counting from the run's latest snapshot, not from this fold, is what keeps a load
    // replaying at most `every` events however few each fold commits.
    this.#journal = new Journal(store, graph, lease.runId, run.run.seq, clock, {
      epoch: lease.epoch,
      sinceSnapshot: run.events.length,
    });
    // A fold is bookkeeping, not a segment: it keeps the run's trace context as it found it,
    // for the snapshots it writes and for the tasks it schedules (their worker spans' parent).
    this.#traceparent = storedTraceparent(run.snapshot.data);
    this.#journal.keepTrace(this.#traceparent, false);
  }

  get lease(): Lease {
    return this.#lease;
  }

  /** The run after every step taken so far, committed or not. */
  get after(): Snapshot {
    return this.#after;
  }

  /** The seq of the run's last commit this book made or caught up to. */
  get seq(): number {
    return this.#journal.seq;
  }

  /** What an attempt of `activation` reads, as of every step taken so far. */
  inputOf(activation: Activation): TaskInput {
    return taskInputFor(this.#graph, this.#after, activation, this.#traceparent);
  }

  /**
   * Nothing is uncommitted but the run's start (and the wake-up its enqueue left): a commit of
   * it alone would tell nobody anything.
   */
  get onlyStart(): boolean {
    return this.#steps.length === 1 && this.#steps[0]!.event.type === 'started';
  }

  /** Steps `due` in order on top of what is stepped so far; items that change nothing are only consumed. */
  add(due: readonly Due[]): void {
    for (const item of due) {
      this.#due.push(item);
      const { event, attempt, inboxId } = item;
      if (inboxId !== undefined && !this.#consumed.includes(inboxId)) this.#consumed.push(inboxId);
      if (inboxId === undefined && attempt !== undefined)
        this.#ran.add(`${attempt.event.activation}#${attempt.event.attempt ?? 1}`);
      if (event === undefined) continue;
      const current = this.#after;
      const result = step(this.#graph, current, event);
      if (result.snapshot === current && result.commands.length === 0) continue;
      const now = this.#clock.now();
      const own = this.#trace.entryFor(result.outcome, event, attempt, now);
      this.#steps.push({
        event,
        after: result.snapshot,
        trace: own === undefined ? [] : [own],
        extras: commitExtras(this.#graph, event, current, result.snapshot, result.commands, now),
        commands: result.commands,
      });
      this.#after = result.snapshot;
    }
  }

  /**
   * The activation a worker may run itself, under the run's lease, rather than queue as a task:
   * the only thing left in flight, scheduled by these steps, due now. Never one of a run with a
   * deadline, whose timer only a fold of the unheld run can act on.
   */
  soleNext(): Activation | undefined {
    const after = this.#after;
    if (after.status !== 'running' || after.pending.length !== 1) return undefined;
    if (after.limits.deadlineAt !== undefined) return undefined;
    const next = after.pending[0]!;
    if (next.notBefore !== undefined && next.notBefore > this.#clock.now()) return undefined;
    const scheduled = this.#steps.some((s) =>
      s.commands.some((c) => c.type === 'execute' && c.activation.id === next.id),
    );
    return scheduled ? next : undefined;
  }

  /**
   * Commits what is stepped, scheduling what it schedules but `keep`, and gives the lease up
   * with it unless the caller keeps an activation to run. On a conflict, steps the same items
   * again on top of what another process committed, and keeps `keep` only if it is still the
   * run's sole next activation.
   * @throws WaymarkError `LEASE_LOST`, `STORE_*`.
   */
  async commit(keep?: Activation): Promise<Booked> {
    for (let conflicts = 0; ; conflicts++) {
      const steps = this.#journalSteps(keep);
      try {
        if (steps.length > 0)
          await this.#journal.recordAll(this.#committer, steps, keep === undefined);
        else if (this.#consumed.length > 0)
          await this.#store.consume(this.#lease.runId, this.#lease, this.#consumed);
        this.#base = this.#after;
        this.#due = [];
        this.#steps = [];
        this.#consumed = [];
        this.#ran.clear();
        return {
          committed: steps.length,
          released: steps.length > 0 && keep === undefined,
          ...(keep !== undefined && { kept: keep }),
        };
      } catch (error) {
        if (!isWaymarkError(error) || error.code !== 'STORE_CONFLICT') throw error;
        if (conflicts >= maxConflictsInARow) throw error;
        // Another process appended to the run (a cancellation): fold it in, take ours again.
        this.#base = await this.#journal.catchUp(this.#base);
        const due = this.#due;
        this.#due = [];
        this.#steps = [];
        this.#consumed = [];
        this.#ran.clear();
        this.#after = this.#base;
        this.add(due);
        if (keep !== undefined && this.soleNext()?.id !== keep.id) keep = undefined;
      }
    }
  }

  /** The steps as the journal records them: with their tasks, and the inbox items with the last. */
  #journalSteps(keep: Activation | undefined): JournalStep[] {
    const steps: JournalStep[] = this.#steps.map(({ commands, ...s }) => ({
      ...s,
      extras: { ...s.extras, schedule: this.#scheduleOf(s.after, commands, keep) },
    }));
    const last = steps.at(-1);
    if (last !== undefined && this.#consumed.length > 0) {
      const schedule = { ...last.extras?.schedule, consumed: this.#consumed };
      steps[steps.length - 1] = { ...last, extras: { ...last.extras, schedule } };
    }
    return steps;
  }

  /** The tasks a commit schedules and cancels. */
  #scheduleOf(
    after: Snapshot,
    commands: readonly Command[],
    keep: Activation | undefined,
  ): NonNullable<Commit['schedule']> {
    const tasks: TaskRecord[] = [];
    const cancel: string[] = [];
    for (const command of commands) {
      if (command.type === 'execute') {
        const { id, attempt } = command.activation;
        if (id !== keep?.id && !this.#ran.has(`${id}#${attempt}`))
          tasks.push(taskOf(this.#graph, after, command.activation, this.#traceparent));
      } else if (command.type === 'abort') cancel.push(...command.activations);
    }
    // A run that stopped runs nothing more: what is still queued for it is cancelled (its
    // pending activations stay in the checkpoint, for a resume to schedule again).
    if (after.status !== 'running' && after.status !== 'waiting') {
      for (const a of after.pending) if (!cancel.includes(a.id)) cancel.push(a.id);
    }
    return {
      ...(tasks.length > 0 && { tasks }),
      ...(cancel.length > 0 && { cancel }),
    };
  }
}
