import { isWaymarkError } from '../../error/waymark-error.js';
import type { CompiledGraph } from '../../graph/compiled.js';
import type { Commit, Lease, Store, StoredEvent, TaskRecord } from '../../store/store.js';
import type { WorkQueue } from '../../store/work-queue.js';
import type { Attempt } from '../attempt/execute.js';
import { taskOf } from '../attempt/task-input.js';
import type { Clock } from '../clock.js';
import type { Activation, RunEvent, Snapshot, StepResult } from '../core/snapshot.js';
import { step } from '../core/step.js';
import type { TraceEntry } from '../watch/trace.js';
import { commitExtras } from './commit-extras.js';
import { groupWriter, type Journal, type JournalStep } from './journal.js';
import type { TraceRecorder } from './trace-recorder.js';

/** Something a run is stepped through: an event, the attempt it ends, the inbox item it came in. */
export interface Due {
  readonly event?: RunEvent;
  readonly attempt?: Attempt;
  readonly inboxId?: number;
}

/** One step taken: the event, the run before and after it, and what its commit carries. */
export interface Stepped extends JournalStep {
  readonly before: Snapshot;
  readonly result: StepResult;
  readonly attempt: Attempt | undefined;
  /** When it was stepped: its time when nothing records it (a run in memory only). */
  readonly steppedAt: number;
}

/** What one commit of a book did. */
export interface Booked {
  /** The steps it committed, in order; the first has seq `seq - steps.length + 1`. */
  readonly steps: readonly Stepped[];
  /** The seq of its last commit (the book's seq after it). */
  readonly seq: number;
  /** When each step's commit was made, in order. */
  readonly at: readonly number[];
  /** The lease was given up with the commit. */
  readonly released: boolean;
  /** The activations its steps scheduled that the caller runs itself: never tasks. */
  readonly kept: readonly Activation[];
}

/** Attempts running now, as the book's trace of a step that cancels them needs them. */
export type InFlight = ReadonlyMap<
  string,
  { readonly activation: Activation; readonly startedAt: number }
>;

/** What a book needs beside the run it starts from. */
export interface BookOptions {
  readonly graph: CompiledGraph;
  readonly clock: Clock;
  readonly trace: TraceRecorder;
  /** Where the steps are recorded; none for a run that lives in memory only. */
  readonly journal?: Journal;
  /** The store the journal writes to: where inbox items read are consumed. */
  readonly store?: Store;
  /** The lease the book's commits are made under, as last renewed. */
  readonly lease?: () => Lease;
  /** Where commits of several steps go (a worker's batching committer); default the store's. */
  readonly writer?: Pick<WorkQueue, 'commitAll'>;
  /** The store serves workers: what a commit schedules and does not keep becomes a task. */
  readonly schedulesTasks?: boolean;
  /** The trace context kept with the run: the parent of the worker spans of its tasks. */
  readonly traceparent?: string | undefined;
  /** The attempts in flight here, so a step that cancels or abandons them records their end. */
  readonly inFlight?: () => InFlight;
  /** Told of each event another process committed, as a conflict folds it in. */
  readonly onCaughtUp?: (
    stored: StoredEvent,
    before: Snapshot,
    event: RunEvent,
    result: StepResult,
  ) => void;
}

// Conflicts come from other processes appending to the run (a cancellation); a run that keeps
// conflicting is not being left alone, and the book stops rather than spin.
const maxConflictsInARow = 100;

// A store that cannot be reached for a moment: the same commit is taken again after 50, 100,
// 200 ... ms, up to 2 s between tries, for as long as the caller's signal allows (its lease).
const storeBackoffMs = 50;
const storeBackoffCapMs = 2_000;

/**
 * The uncommitted steps of a run, on top of its last commit: what its driver folded (a start,
 * attempts that ended, answers, a deadline, a cancellation), stepped through the pure `step`,
 * and committed together in one transaction, fenced by seq and by the lease's epoch. A conflict
 * (another process appended to the run) is caught up with and the same items are stepped again
 * on top of it; a store that cannot be reached is tried again after a pause, so infrastructure
 * never fails a run. Both hosts keep their runs in one: the in-process driver and a worker.
 *
 * @example
 * const book = new RunBook(snapshot, { graph, clock, trace, journal, store });
 * book.add([{ event: { type: 'started' } }]);
 * const booked = await book.commit(() => book.scheduled(), () => false);
 */
export class RunBook {
  readonly #options: BookOptions;
  /** The run as of the journal's last commit. */
  #base: Snapshot;
  #after: Snapshot;
  #due: Due[] = [];
  #steps: Stepped[] = [];
  #consumed: number[] = [];
  /** The activations (`id#attempt`) that ran here since the base: never tasks. */
  readonly #ran = new Set<string>();
  /** Steps committed, for a run in memory only (a journal counts its own). */
  #seq = 0;

  constructor(base: Snapshot, options: BookOptions) {
    this.#options = options;
    this.#base = base;
    this.#after = base;
  }

  /** The run after every step taken so far, committed or not. */
  get after(): Snapshot {
    return this.#after;
  }

  /** The run as of the last commit. */
  get base(): Snapshot {
    return this.#base;
  }

  /** Whether anything waits to be committed: steps, or inbox items read. */
  get dirty(): boolean {
    return this.#steps.length > 0 || this.#consumed.length > 0;
  }

  /** Nothing is uncommitted but the run's start: a commit of it alone tells nobody anything. */
  get onlyStart(): boolean {
    return this.#steps.length === 1 && this.#steps[0]!.event.type === 'started';
  }

  /** Steps `due` in order on top of what is stepped so far; items that change nothing are only consumed. */
  add(due: readonly Due[]): void {
    for (const item of due) this.addOne(item);
  }

  /** Steps one item on top of what is stepped so far. */
  addOne(item: Due): void {
    this.#due.push(item);
    const { event, attempt, inboxId } = item;
    if (inboxId !== undefined && !this.#consumed.includes(inboxId)) this.#consumed.push(inboxId);
    if (inboxId === undefined && attempt !== undefined && this.#options.schedulesTasks === true)
      this.#ran.add(`${attempt.event.activation}#${attempt.event.attempt ?? 1}`);
    if (event === undefined) return;
    const before = this.#after;
    const result = step(this.#options.graph, before, event);
    const after = result.snapshot;
    // An event about nothing pending (late, stale, after a stop) changes nothing: no commit.
    if (after === before && result.commands.length === 0) return;
    const { clock, journal } = this.#options;
    const now = clock.now();
    const trace = this.#traceOf(result, event, attempt, before, after, now);
    this.#steps.push({
      event,
      before,
      result,
      attempt,
      after,
      trace,
      steppedAt: now,
      // Waits and timers live in the store: a run in memory only has none to write.
      extras:
        journal === undefined
          ? undefined
          : commitExtras(this.#options.graph, event, before, after, result.commands, now),
    });
    this.#after = after;
    // A `for` sleep's time is now: recorded at once, in the same commit as what reached it.
    for (const command of result.commands) {
      if (command.type !== 'sleep' || command.activation.sleeping?.until !== undefined) continue;
      const until = now + (command.activation.sleeping?.forMs ?? 0);
      this.addOne({ event: { type: 'slept', activation: command.activation.id, until } });
    }
  }

  /** The trace entries a step ends: its attempt's, and those of attempts it cancelled or abandoned. */
  #traceOf(
    result: StepResult,
    event: RunEvent,
    attempt: Attempt | undefined,
    before: Snapshot,
    after: Snapshot,
    now: number,
  ): TraceEntry[] {
    const { trace } = this.#options;
    const entries: TraceEntry[] = [];
    const own = trace.entryFor(result.outcome, event, attempt, now);
    if (own !== undefined) entries.push(own);
    const inFlight = this.#options.inFlight?.();
    if (inFlight === undefined || inFlight.size === 0) return entries;
    for (const command of result.commands) {
      if (command.type !== 'abort') continue;
      const doomed = command.activations.flatMap((id) => inFlight.get(id) ?? []);
      entries.push(...trace.cancelled(doomed, now));
    }
    // The run stops here: attempts still in flight are recorded as cancelled in this commit.
    if (before.status === 'running' && after.status !== 'running') {
      const abandoned = after.pending.flatMap((a) => inFlight.get(a.id) ?? []);
      entries.push(...trace.cancelled(abandoned, now));
    }
    return entries;
  }

  /** The activations the uncommitted steps scheduled that are still pending, in order. */
  scheduled(): Activation[] {
    const after = this.#after;
    if (after.status !== 'running') return [];
    const out: Activation[] = [];
    const steps = this.#steps;
    // The common commit: one step that schedules one activation, pending under the same attempt.
    if (steps.length === 1) {
      const { commands } = steps[0]!.result;
      const c = commands.length === 1 ? commands[0]! : undefined;
      if (c?.type === 'execute') {
        const now = after.pending.find((a) => a.id === c.activation.id);
        return now !== undefined && now.attempt === c.activation.attempt ? [now] : out;
      }
    }
    const executes: Activation[] = [];
    for (const s of steps)
      for (const c of s.result.commands) if (c.type === 'execute') executes.push(c.activation);
    if (executes.length === 0) return out;
    // A few are found in the pending list as they are; a map opening's hundred branches by id.
    const byId =
      executes.length <= 4 ? undefined : new Map(after.pending.map((a) => [a.id, a] as const));
    // An activation scheduled twice (retried within the steps) is listed once: a set, since a
    // map's hundred branches would make `out.includes` quadratic.
    const listed = executes.length <= 4 ? undefined : new Set<Activation>();
    for (const scheduled of executes) {
      const now = byId?.get(scheduled.id) ?? after.pending.find((a) => a.id === scheduled.id);
      if (now === undefined || now.attempt !== scheduled.attempt) continue;
      if (listed === undefined ? out.includes(now) : listed.has(now)) continue;
      listed?.add(now);
      out.push(now);
    }
    return out;
  }

  /**
   * The activation a worker may run itself under the run's lease rather than queue as a task:
   * the only thing left in flight, scheduled by these steps, due now. Never one of a run with a
   * deadline, whose timer only a fold of the unheld run acts on.
   */
  soleNext(): Activation | undefined {
    const after = this.#after;
    if (after.status !== 'running' || after.pending.length !== 1) return undefined;
    if (after.limits.deadlineAt !== undefined) return undefined;
    const next = after.pending[0]!;
    if (next.notBefore !== undefined && next.notBefore > this.#options.clock.now())
      return undefined;
    return this.scheduled()[0]?.id === next.id ? next : undefined;
  }

  /**
   * Commits what is stepped. `keep` says which of the activations the steps scheduled the
   * caller runs itself (asked again after a conflict, which may change them); with a store that
   * serves workers the rest become tasks. `release` says, given what is kept, whether the lease
   * is given up with the commit. A conflict is caught up with and the same items stepped again;
   * a store error marked retryable is tried again after a pause while `signal` allows.
   * @throws WaymarkError `LEASE_LOST`, `STORE_*` (not retryable, or `signal` aborted).
   */
  async commit(
    keep: () => readonly Activation[],
    release: (kept: readonly Activation[]) => boolean,
    signal?: AbortSignal,
  ): Promise<Booked> {
    const { journal, store } = this.#options;
    let conflicts = 0;
    let unavailable = 0;
    for (;;) {
      const kept = keep();
      const steps = this.#steps;
      const releasing = release(kept);
      let at: readonly number[] = [];
      try {
        if (journal !== undefined && steps.length > 0)
          at = await this.#record(journal, this.#journalSteps(kept), releasing);
        else if (this.#consumed.length > 0 && store !== undefined) {
          const lease = this.#options.lease?.();
          if (lease !== undefined)
            await (store as Store & WorkQueue).consume(lease.runId, lease, this.#consumed);
        }
      } catch (error) {
        if (!isWaymarkError(error)) throw error;
        if (error.code === 'STORE_CONFLICT' && ++conflicts <= maxConflictsInARow) {
          await this.#catchUp(journal!);
          continue;
        }
        if (error.code.startsWith('STORE_') && error.retryable && !aborted(signal)) {
          const wait = Math.min(storeBackoffCapMs, storeBackoffMs * 2 ** unavailable++);
          await this.#options.clock.sleep(wait, signal);
          if (!aborted(signal)) continue;
        }
        throw error;
      }
      return this.#booked(steps, kept, releasing, at);
    }
  }

  /**
   * Commits what is stepped at once when there is nothing to write: a run in memory only. Saves
   * the promise a commit is otherwise, on every step of the cheapest runs. Undefined: `commit`.
   */
  commitNow(
    keep: () => readonly Activation[],
    release: (kept: readonly Activation[]) => boolean,
  ): Booked | undefined {
    if (this.#options.journal !== undefined) return undefined;
    if (this.#consumed.length > 0 && this.#options.store !== undefined) return undefined;
    const kept = keep();
    return this.#booked(this.#steps, kept, release(kept), []);
  }

  #booked(
    steps: Stepped[],
    kept: readonly Activation[],
    releasing: boolean,
    at: readonly number[],
  ): Booked {
    const { journal } = this.#options;
    this.#base = this.#after;
    // Emptied in place but for the steps, which the caller is handed: this runs every step.
    this.#due.length = 0;
    if (steps.length > 0) this.#steps = [];
    // Handed to the store with the commit: a new list, not this one emptied under it.
    if (this.#consumed.length > 0) this.#consumed = [];
    if (this.#ran.size > 0) this.#ran.clear();
    if (journal === undefined) this.#seq += steps.length;
    return {
      steps,
      seq: journal?.seq ?? this.#seq,
      at,
      released: releasing && steps.length > 0,
      kept,
    };
  }

  /** Records the steps: one commit alone through the store's own path, several in one transaction. */
  async #record(
    journal: Journal,
    steps: readonly JournalStep[],
    release: boolean,
  ): Promise<readonly number[]> {
    const { writer, store } = this.#options;
    if (writer === undefined && steps.length === 1) {
      const [s] = steps;
      await journal.record(s!.event, s!.after, s!.trace, s!.extras, release);
      return [journal.lastAt];
    }
    const commits = await journal.recordAll(writer ?? groupWriter(store!), steps, release);
    return commits.map((c) => c.at);
  }

  /** Reads what another process committed since the last commit (a cancellation), and steps on top. */
  async refresh(): Promise<void> {
    const { journal } = this.#options;
    if (journal !== undefined) await this.#catchUp(journal);
  }

  /** After a conflict: fold in what another process committed, then step the same items again. */
  async #catchUp(journal: Journal): Promise<void> {
    this.#base = await journal.catchUp(this.#base, this.#options.onCaughtUp);
    const due = this.#due;
    this.#due = [];
    this.#steps = [];
    this.#consumed = [];
    this.#ran.clear();
    this.#after = this.#base;
    this.add(due);
  }

  /** The steps as the journal records them: with their tasks, and the inbox items with the last. */
  #journalSteps(kept: readonly Activation[]): JournalStep[] {
    if (this.#options.schedulesTasks !== true && this.#consumed.length === 0) return this.#steps;
    const steps: JournalStep[] = this.#steps.map((s) => {
      if (this.#options.schedulesTasks !== true) return s;
      const schedule = this.#scheduleOf(s.after, s.result, kept);
      return schedule === undefined ? s : { ...s, extras: { ...s.extras, schedule } };
    });
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
    result: StepResult,
    kept: readonly Activation[],
  ): NonNullable<Commit['schedule']> | undefined {
    const { graph, traceparent } = this.#options;
    const tasks: TaskRecord[] = [];
    const cancel: string[] = [];
    for (const command of result.commands) {
      if (command.type === 'execute') {
        const { id, attempt } = command.activation;
        if (!kept.some((k) => k.id === id) && !this.#ran.has(`${id}#${attempt}`))
          tasks.push(taskOf(graph, after, command.activation, traceparent));
      } else if (command.type === 'abort') cancel.push(...command.activations);
    }
    // A run that stopped runs nothing more: what is still queued for it is cancelled (its
    // pending activations stay in the checkpoint, for a resume to schedule again).
    if (after.status !== 'running' && after.status !== 'waiting') {
      for (const a of after.pending) if (!cancel.includes(a.id)) cancel.push(a.id);
    }
    if (tasks.length === 0 && cancel.length === 0) return undefined;
    return {
      ...(tasks.length > 0 && { tasks }),
      ...(cancel.length > 0 && { cancel }),
    };
  }
}

function aborted(signal: AbortSignal | undefined): boolean {
  return signal?.aborted === true;
}
