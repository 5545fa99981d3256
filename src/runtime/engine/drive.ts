import { isWaymarkError, WaymarkError } from '../../error/waymark-error.js';
import type { CompiledGraph } from '../../graph/compiled.js';
import { maxTimerMs } from '../../graph/limits.js';
import { keepsSignals, type SignalStore } from '../../store/signal-store.js';
import type { Lease, Store } from '../../store/store.js';
import { servesWorkers } from '../../store/work-queue.js';
import type { Attempt } from '../attempt/execute.js';
import type { Executor } from '../attempt/executor.js';
import { endAttemptWorkspaces } from '../attempt/workspace.js';
import { type Clock, systemClock } from '../clock.js';
import { wakeOf } from '../core/activations.js';
import type { Activation, RunEvent, Snapshot } from '../core/snapshot.js';
import { type Booked, type BookOptions, type Due, RunBook, type Stepped } from './book.js';
import { answeredBySignal, eventWait } from './event-waits.js';
import { Inbox } from './inbox.js';
import type { Journal } from './journal.js';
import type { Kept, LeaseKeeper, LeaseLoss } from './lease-keeper.js';
import type { TraceRecorder } from './trace-recorder.js';

/** What arrives while a run is driven: something to step, a lost lease, a reason to look again. */
type Item =
  | { readonly kind: 'due'; readonly due: Due }
  | { readonly kind: 'lost'; readonly why: 'lost' | 'lapsed' }
  /** The run stopped by another process's hand (a cancellation): read what it committed. */
  | { readonly kind: 'refresh' }
  /** A drain asked for, or its grace over: look at what is left. */
  | { readonly kind: 'drain'; readonly graceOver: boolean };

/** The lease a drive holds, and the keeper that renews it. */
export interface HeldLease {
  readonly lease: Lease;
  /** When the claim that returned it was sent, by `monotonicMs()`. */
  readonly sentAt: number;
  readonly keeper: LeaseKeeper;
}

/** What a drive needs: the run as committed, where it records, how it runs what it keeps. */
export interface DriveOptions
  extends Pick<BookOptions, 'schedulesTasks' | 'traceparent' | 'writer' | 'onCaughtUp'> {
  readonly graph: CompiledGraph;
  readonly clock: Clock;
  /** The run as of the journal's last commit (or as created, for a run in memory only). */
  readonly snapshot: Snapshot;
  readonly trace: TraceRecorder;
  readonly journal?: Journal;
  readonly store?: Store;
  readonly lease?: HeldLease;
  /** Builds the executor of the activations this drive keeps; `done` takes their attempts. */
  readonly executor: (done: (attempt: Attempt) => void) => Executor;
  /**
   * Which of the activations the uncommitted steps scheduled run here (`book.scheduled()`: all
   * of them, in process; a worker: the sole next one, when it has a slot). With a store that
   * serves workers, the rest become tasks; otherwise they stay pending in the checkpoint.
   */
  readonly keep: (book: RunBook) => readonly Activation[];
  /** Told of what each commit kept in the end (a worker gives back a slot it did not use). */
  readonly kept?: (kept: readonly Activation[]) => void;
  /** A run's start alone is not committed: it goes with its first activation's end (a worker). */
  readonly deferStart?: boolean;
  /** Told of each step once its commit landed, with its seq and when it was committed. */
  readonly onCommitted?: (step: Stepped, seq: number, at: number) => void;
  /** Told when the lease's work must stop: lost, lapsed, or the run stopped elsewhere. */
  readonly onLoss?: (why: LeaseLoss) => void;
  /** Told after each commit: how many steps it wrote, and how the run stands. */
  readonly onBooked?: (committed: number, status: Snapshot['status']) => void;
  /**
   * Whether a drive that throws (not for a lost lease) gives its lease up itself. Default true;
   * false for a worker, which decides what a failing fold costs the run before letting it go.
   */
  readonly releaseOnError?: boolean;
  /**
   * A run left waiting only on sleeps, one of which is due within this many ms, is not given
   * up: the drive sleeps on its clock and wakes it itself (in process). Default 0: never.
   */
  readonly holdSleepsMs?: number;
  /** The same for an activation its rate limit deferred (a minute at most, but for a 429). */
  readonly holdRateSleepsMs?: number;
}

/** What a drive's first commit did. */
export interface Folded {
  readonly committed: number;
  readonly status: Snapshot['status'];
  /** The lease was given up with the commit. */
  readonly released: boolean;
  /** Activations run here: the drive goes on until they are done (`settled`). */
  readonly continues: boolean;
}

/** How a drive ended. */
export interface DriveEnd {
  readonly snapshot: Snapshot;
  /**
   * `stopped`: the run is no longer running (it waits, or ended); `idle`: nothing of it runs here
   * (its tasks are queued for any worker); `drained`: given back unfinished, resumable.
   */
  readonly how: 'stopped' | 'idle' | 'drained';
}

// Why in-flight bodies' signals abort when a drive ends: one object, made once.
const runStopped = new Error('the run stopped');
const drained = new Error('the run was given back unfinished (drained)');
// Why a deadline timer is disarmed: one reason object, not a DOMException per run.
const disarmed = new Error('the deadline was disarmed');

/**
 * The one engine that drives a run, for both hosts: the in-process driver (`run`, `resume`,
 * `rewind`, `serve`) and a worker. It folds what happens to the run (attempts that ended, a
 * cancellation, the deadline, answers) through the pure `step` into a {@link RunBook}, commits
 * the steps before anything they schedule starts (write-ahead), fenced by seq and epoch, and
 * hands the activations it keeps to its executor; what it does not keep becomes tasks for any
 * worker. Its lease is renewed by the host's {@link LeaseKeeper}: when it is lost, or cannot be
 * renewed in time (a third of a lease before it could expire), every body stops and the drive
 * rejects with `LEASE_LOST`, committing nothing more. `drain` gives the run back unfinished:
 * nothing new starts, bodies running may finish within a grace (their results are committed),
 * the rest are stopped and the run is left resumable with its lease released.
 *
 * @example
 * const drive = new Drive({ graph, clock, snapshot, trace, executor, keep: (b) => b.scheduled() });
 * const end = await drive.run([{ event: { type: 'started' } }]);
 */
export class Drive {
  readonly #options: DriveOptions;
  readonly #book: RunBook;
  readonly #executor: Executor;
  readonly #inbox = new Inbox<Item>();
  // Both made when first needed: a run in memory only, the cheapest, never needs them.
  /** Aborted once the lease is lost: commits stop retrying. */
  #leaseStop: AbortController | undefined;
  /** Aborted when the drive ends: a drain's grace timer stops. */
  #ended: AbortController | undefined;
  #over = false;
  #kept: Kept<Lease> | undefined;
  #lost: 'lost' | 'lapsed' | undefined;
  /** A cancellation or the deadline is in: nothing new starts. */
  #stopAsked = false;
  #draining = false;
  #graceOver = false;
  #released = false;
  #deadline: { readonly at: number; readonly stop: AbortController } | undefined;
  /** The event waits this drive asked its store's signals for, by request id. */
  readonly #asked = new Set<string>();
  /** The sleeps this drive wakes itself, by activation id. */
  readonly #sleeps = new Map<string, AbortController>();
  readonly #keep = () => (this.#stopping() ? [] : this.#options.keep(this.#book));
  readonly #releasing = (kept: readonly Activation[]) => this.#releases(kept);
  #resolveFolded!: (folded: Folded) => void;
  #rejectFolded!: (error: unknown) => void;
  /** Resolves once the drive's first commit landed (or found nothing to commit). */
  readonly folded: Promise<Folded>;

  constructor(options: DriveOptions) {
    this.#options = options;
    this.folded = new Promise<Folded>((resolve, reject) => {
      this.#resolveFolded = resolve;
      this.#rejectFolded = reject;
    });
    // A caller that awaits only the drive's end must not meet an unhandled rejection here.
    this.folded.catch(() => {});
    this.#executor = options.executor((attempt) =>
      this.#inbox.push({ kind: 'due', due: { event: attempt.event, attempt } }),
    );
    const { lease } = options;
    this.#book = new RunBook(options.snapshot, {
      graph: options.graph,
      clock: options.clock,
      trace: options.trace,
      ...(options.journal !== undefined && { journal: options.journal }),
      ...(options.store !== undefined && { store: options.store }),
      ...(options.writer !== undefined && { writer: options.writer }),
      ...(options.schedulesTasks !== undefined && { schedulesTasks: options.schedulesTasks }),
      ...(options.traceparent !== undefined && { traceparent: options.traceparent }),
      ...(options.onCaughtUp !== undefined && { onCaughtUp: options.onCaughtUp }),
      ...(lease !== undefined && { lease: () => this.#kept?.current ?? lease.lease }),
      inFlight: () => this.#executor.inFlight,
    });
  }

  /** The run after every step taken so far. */
  get snapshot(): Snapshot {
    return this.#book.after;
  }

  /** The executor of the activations this drive keeps. */
  get executor(): Executor {
    return this.#executor;
  }

  /** The lease as last renewed, if the drive holds one. */
  get lease(): Lease | undefined {
    return this.#kept?.current ?? this.#options.lease?.lease;
  }

  /** Steps `first`, commits, and drives the run until nothing of it runs here. */
  async run(first: readonly Due[]): Promise<DriveEnd> {
    const { lease } = this.#options;
    if (lease !== undefined)
      this.#kept = lease.keeper.keepRun(lease.lease, lease.sentAt, (why) => this.#lose(why));
    let end: DriveEnd | undefined;
    try {
      let folded: Folded;
      try {
        this.#book.add(first);
        folded = (await this.#commit(true))!;
      } catch (error) {
        this.#rejectFolded(error);
        throw error;
      }
      this.#resolveFolded(folded);
      end = await this.#settle();
      while (end.how === 'stopped' && (await this.#takeSignals(end.snapshot)))
        end = await this.#settle();
      if (end.how === 'stopped') await endAttemptWorkspaces(this.#options.graph, end.snapshot);
      return end;
    } catch (error) {
      throw this.#lost === undefined ? error : lostLease(this.#book.after.runId, this.#lost, error);
    } finally {
      this.#over = true;
      this.#ended?.abort(runStopped);
      this.#deadline?.stop.abort(disarmed);
      for (const stop of this.#sleeps.values()) stop.abort(disarmed);
      this.#executor.stop(this.#draining ? drained : runStopped);
      this.#kept?.release();
      const giveBack = end !== undefined || this.#options.releaseOnError !== false;
      if (!this.#released && this.#lost === undefined && giveBack)
        await this.#release(end?.how === 'drained');
    }
  }

  /** Asks the run to stop for good: a cancellation, stepped and committed like any event. */
  cancel(reason: string): void {
    this.#stop({ type: 'cancelled', reason });
  }

  /**
   * Gives the run back unfinished: nothing new starts; bodies running now may end within
   * `graceMs` and their results are committed; then the rest are stopped, nothing they return
   * is recorded, and the lease is released with the run still `running`, resumable.
   */
  drain(graceMs: number): void {
    if (this.#draining) return;
    this.#draining = true;
    this.#inbox.push({ kind: 'drain', graceOver: false });
    // Real time, like the lease: a grace is how long a process shutting down waits.
    if (this.#over) return;
    this.#ended ??= new AbortController();
    const ended = this.#ended;
    void systemClock.sleep(graceMs, ended.signal).then(() => {
      if (!ended.signal.aborted) this.#inbox.push({ kind: 'drain', graceOver: true });
    });
  }

  #stop(event: RunEvent): void {
    this.#stopAsked = true;
    this.#inbox.push({ kind: 'due', due: { event } });
  }

  #lose(why: LeaseLoss): void {
    this.#options.onLoss?.(why);
    if (why === 'stopped') {
      this.#inbox.push({ kind: 'refresh' });
      return;
    }
    this.#lost = why;
    this.#leaseStopping().abort(new Error(`lease ${why}`));
    // Another process may drive the run now: nothing this one still has in flight may land.
    this.#executor.stop(new Error('this process lost the run'));
    this.#inbox.push({ kind: 'lost', why });
  }

  /** Waits for what happens, steps it, commits it; until nothing of the run runs here. */
  async #settle(): Promise<DriveEnd> {
    for (;;) {
      const end = this.#endNow();
      if (end !== undefined) return end;
      // Everything that came in meanwhile is stepped and committed together: one commit for
      // the branches that ended while the last one was on the wire.
      let item: Item | undefined = this.#inbox.take() ?? (await this.#inbox.next());
      let refresh = false;
      for (; item !== undefined; item = this.#inbox.take()) {
        if (item.kind === 'due') this.#book.addOne(item.due);
        else if (item.kind === 'lost') throw lostLease(this.#book.after.runId, item.why);
        else if (item.kind === 'refresh') refresh = true;
        else if (item.graceOver && !this.#graceOver) {
          this.#graceOver = true;
          this.#executor.stop(drained);
        }
      }
      // What another process committed is read, and what is stepped here stepped again on top.
      if (refresh) await this.#book.refresh();
      const committed = this.#commit(false);
      if (committed instanceof Promise) await committed;
    }
  }

  /** Whether the drive is over, and how, after its last commit. */
  #endNow(): DriveEnd | undefined {
    const snapshot = this.#book.after;
    if (this.#book.dirty) return undefined;
    if (snapshot.status !== 'running') {
      // A signal's answer stepped after the run stopped waiting (#takeSignals) is still due.
      if (this.#inbox.size > 0 && this.#asked.size > 0) return undefined;
      if (!this.#holds(snapshot)) return { snapshot, how: 'stopped' };
      this.#armSleeps(snapshot);
      return undefined;
    }
    if (this.#draining && (this.#graceOver || !this.#busyHere()))
      return { snapshot, how: 'drained' };
    if (!this.#busyHere() && this.#inbox.size === 0) return { snapshot, how: 'idle' };
    return undefined;
  }

  /** Whether an activation of the run still pending runs here. */
  #busyHere(): boolean {
    if (this.#graceOver) return false;
    const { active } = this.#executor;
    if (active.size === 0) return false;
    for (const a of this.#book.after.pending) if (active.has(a.id)) return true;
    return false;
  }

  /**
   * Commits what is stepped, then starts what it keeps; with `fold`, says what the commit did
   * (the drive's first one: how a caller learns it landed). Not a promise when nothing is written
   * (a run in memory only): one fewer on every step.
   */
  #commit(fold: boolean): Folded | undefined | Promise<Folded | undefined> {
    const book = this.#book;
    const options = this.#options;
    if (!book.dirty) return fold ? this.#foldedOf(0, false) : undefined;
    if (options.deferStart === true && book.onlyStart && !this.#stopping()) {
      const kept = options.keep(book);
      if (kept.length > 0) {
        // Not committed yet: the start goes with the first activation's end, one commit for both.
        options.kept?.(kept);
        for (const activation of kept) this.#executor.execute(activation, book.after);
        return fold ? this.#foldedOf(0, false) : undefined;
      }
      options.kept?.([]);
    }
    const now = book.commitNow(this.#keep, this.#releasing);
    if (now !== undefined) return this.#booked(now, fold);
    return book.commit(this.#keep, this.#releasing, this.#leaseStopping().signal).then(
      (booked) => this.#booked(booked, fold),
      (error: unknown) => {
        options.kept?.([]);
        throw error;
      },
    );
  }

  /** What a commit made: the steps told, aborts passed on, what it keeps started. */
  #booked(booked: Booked, fold: boolean): Folded | undefined {
    const book = this.#book;
    const options = this.#options;
    options.kept?.(booked.kept);
    if (booked.released) this.#released = true;
    const { steps } = booked;
    const first = booked.seq - steps.length + 1;
    let slept = false;
    for (let i = 0; i < steps.length; i++) {
      const s = steps[i]!;
      options.trace.accept(s.trace);
      options.onCommitted?.(s, first + i, booked.at[i] ?? s.steppedAt);
      for (const command of s.result.commands) {
        if (command.type === 'abort') this.#executor.abort(command.activations);
        else if (command.type === 'sleep') slept = true;
      }
    }
    options.onBooked?.(steps.length, book.after.status);
    this.#armDeadline(book.after);
    if (slept || this.#sleeps.size > 0) this.#armSleeps(book.after);
    if (book.after.status === 'running' && booked.kept.length > 0) {
      // One step (nearly every commit) left the run as it is now: that is the state it scheduled.
      const by = steps.length > 1 ? scheduledBy(steps) : undefined;
      for (const activation of booked.kept)
        this.#executor.execute(activation, by?.get(activation.id) ?? book.after);
    }
    return fold ? this.#foldedOf(steps.length, booked.released) : undefined;
  }

  #leaseStopping(): AbortController {
    this.#leaseStop ??= new AbortController();
    return this.#leaseStop;
  }

  #stopping(): boolean {
    return this.#stopAsked || this.#draining || this.#lost !== undefined;
  }

  #foldedOf(committed: number, released: boolean): Folded {
    const status = this.#book.after.status;
    return { committed, status, released, continues: status === 'running' && this.#busyHere() };
  }

  /** Whether a commit ends the drive, given what it keeps: then it gives the lease up with it. */
  #releases(kept: readonly Activation[]): boolean {
    if (this.#options.lease === undefined) return false;
    const after = this.#book.after;
    if (after.status !== 'running') return !this.#holds(after) && !this.#listens(after);
    if (kept.length > 0 || this.#inbox.size > 0) return false;
    return this.#graceOver || !this.#busyHere();
  }

  /** Sleeps, on the run's clock, until the run's deadline (data in its snapshot), then stops it. */
  #armDeadline(snapshot: Snapshot): void {
    const at = snapshot.limits.deadlineAt;
    if (at === this.#deadline?.at || snapshot.status !== 'running') return;
    this.#deadline?.stop.abort(disarmed);
    if (at === undefined) {
      this.#deadline = undefined;
      return;
    }
    const stop = new AbortController();
    this.#deadline = { at, stop };
    const { clock } = this.#options;
    clock.sleep(Math.max(0, at - clock.now()), stop.signal).then(() => {
      if (!stop.signal.aborted) this.#stop({ type: 'deadline' });
    });
  }

  /**
   * Whether the run waits only on sleeps (and blocked entries), one of them due within
   * `holdSleepsMs`: the drive then keeps it, and its lease, and wakes it on its clock.
   */
  #holds(snapshot: Snapshot): boolean {
    if (snapshot.status !== 'waiting' || this.#stopping()) return false;
    const now = this.#options.clock.now();
    let soon = false;
    for (const a of snapshot.pending) {
      if (a.waiting !== undefined || a.paused === true) return false;
      const until = a.sleeping?.until;
      const hold = this.#holdOf(a);
      if (until !== undefined && hold > 0 && until - now <= hold) soon = true;
    }
    return soon;
  }

  /** How far ahead a sleep of this activation is slept through here: see the hold options. */
  #holdOf(a: Snapshot['pending'][number]): number {
    const hold = this.#options.holdSleepsMs ?? 0;
    if (a.sleeping?.rate === undefined) return hold;
    return Math.max(hold, this.#options.holdRateSleepsMs ?? 0);
  }

  /**
   * Arms a clock sleep for each sleep of the run due within `holdSleepsMs` (a sleep in a
   * branch while others run, or the run's only one), and disarms those that went: woken, or
   * dropped with their branch or run. Its wake is stepped like any event.
   */
  #armSleeps(snapshot: Snapshot): void {
    for (const [id, stop] of this.#sleeps) {
      if (!snapshot.pending.some((a) => a.id === id && a.sleeping !== undefined)) {
        stop.abort(disarmed);
        this.#sleeps.delete(id);
      }
    }
    const live = snapshot.status === 'running' || snapshot.status === 'waiting';
    if (!live) return;
    const { clock } = this.#options;
    for (const a of snapshot.pending) {
      const until = a.sleeping?.until;
      if (until === undefined || this.#sleeps.has(a.id)) continue;
      const hold = this.#holdOf(a);
      if (hold <= 0 || until - clock.now() > hold) continue;
      const stop = new AbortController();
      this.#sleeps.set(a.id, stop);
      const wake = (): void => {
        if (stop.signal.aborted) return;
        const left = until - clock.now();
        // A Node.js timer fires at once past ~24.8 days: a longer sleep is slept in pieces.
        if (left > 0) clock.sleep(Math.min(left, maxTimerMs), stop.signal).then(wake);
        else this.#inbox.push({ kind: 'due', due: { event: wakeOf(a) } });
      };
      wake();
    }
  }

  /** Whether the run waits on an event this drive has not yet asked its store's signals for. */
  #listens(snapshot: Snapshot): boolean {
    const { store, graph } = this.#options;
    if (store === undefined || !keepsSignals(store) || snapshot.status !== 'waiting') return false;
    return snapshot.pending.some(
      (a) =>
        a.waiting !== undefined &&
        !this.#asked.has(a.waiting.requestId) &&
        graph.nodes.get(a.node)?.wait?.event !== undefined,
    );
  }

  /**
   * Once its event waits are committed, asks the store for a signal each: one sent before the
   * run got there is delivered now (the wait's answer, in the store's transaction) and stepped
   * here as its answer. True if there was one to step.
   */
  async #takeSignals(snapshot: Snapshot): Promise<boolean> {
    if (!this.#listens(snapshot) || this.#lost !== undefined) return false;
    const { store, graph, clock } = this.#options;
    const signals = store as Store & SignalStore;
    let took = false;
    for (const a of snapshot.pending) {
      const spec = graph.nodes.get(a.node)?.wait?.event;
      if (a.waiting === undefined || spec === undefined || this.#asked.has(a.waiting.requestId))
        continue;
      this.#asked.add(a.waiting.requestId);
      const wait = eventWait(graph.name, snapshot.runId, a, spec.name);
      // Asked twice: a signal whose statement ran beside the first one is seen by the second.
      const got =
        (await signals.matchSignal(wait, clock.now())) ??
        (await signals.matchSignal(wait, clock.now()));
      if (got === undefined) continue;
      const event = answeredBySignal(graph, snapshot, a, got.payload, clock.now());
      this.#inbox.push({ kind: 'due', due: { event } });
      took = true;
    }
    return took;
  }

  /** Gives the lease up when the drive ended without a commit that did. */
  async #release(drainedHere: boolean): Promise<void> {
    const { store } = this.#options;
    const lease = this.lease;
    if (store === undefined || lease === undefined) return;
    try {
      await store.release(lease);
      // Given back unfinished: a worker folds it now rather than at its next poll.
      if (drainedHere && this.#book.after.status === 'running' && servesWorkers(store))
        await store.wake(lease.runId, this.#options.clock.now());
    } catch {
      // The store may be why the drive stopped; the lease then expires by itself.
    }
  }
}

/**
 * For each activation a group of steps scheduled, the run as the step that scheduled it left
 * it: the state it sees. The last step of the group that scheduled it wins.
 */
function scheduledBy(steps: readonly Stepped[]): Map<string, Snapshot> {
  const by = new Map<string, Snapshot>();
  for (const s of steps)
    for (const command of s.result.commands)
      if (command.type === 'execute') by.set(command.activation.id, s.after);
  return by;
}

/** The error a drive that lost its run rejects with. */
function lostLease(runId: string, why: 'lost' | 'lapsed', cause?: unknown): WaymarkError {
  if (isWaymarkError(cause) && cause.code === 'LEASE_LOST') return cause;
  const message =
    why === 'lapsed'
      ? `this process could not renew its lease on run "${runId}" in time and stopped driving it; another process may take it over`
      : `this process stopped driving run "${runId}": the lease was taken over by another process`;
  return new WaymarkError('LEASE_LOST', message, {
    retryable: false,
    details: { runId },
    ...(cause instanceof Error && { cause }),
  });
}
