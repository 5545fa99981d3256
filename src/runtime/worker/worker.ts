import { isWaymarkError, WaymarkError } from '../../error/waymark-error.js';
import type { CompiledGraph } from '../../graph/compiled.js';
import type { Store } from '../../store/store.js';
import type { ClaimedRun, WorkKind, WorkQueue } from '../../store/work-queue.js';
import { type Clock, monotonicMs, systemClock } from '../clock.js';
import { newOwner, type Owner } from '../engine/identity.js';
import { LeaseKeeper } from '../engine/lease-keeper.js';
import { isPassing } from '../engine/patiently.js';
import { defaultRetentionSweepMs, sweepEvery } from '../ops/retention-sweep.js';
import { defaultSchedulePollMs, scheduleLoop } from '../schedule/schedule-loop.js';
import type { Telemetry } from '../watch/telemetry.js';
import { enqueue } from './enqueue.js';
import { foldRun, type HeldDrive, type Slot } from './fold.js';
import { foldFailure } from './fold-failure.js';
import { RunCommitter } from './run-committer.js';
import { Slots } from './slots.js';
import { checkLeaseCoversStatements } from './statement-deadline.js';
import { TaskFinisher } from './task-finisher.js';
import { Tasks } from './tasks.js';
import type { WorkerEvent } from './worker-event.js';

export type { WorkerEvent } from './worker-event.js';

// Why a wait for work ends early: one reason for all, not a DOMException made at every wake.
const woken = new Error('there may be work');

/** The default number of node bodies a worker runs at once: agent nodes mostly wait. */
export const defaultConcurrency = 100;

/** The default number of failed folds after which a run is failed (FOLD_FAILED). */
export const defaultMaxFoldFailures = 5;

/** The longest a run whose fold failed waits before it is claimed again. */
const maxFoldRetryMs = 60_000;

/** Options of a {@link Worker}. */
export interface WorkerOptions {
  /**
   * Most node bodies running at once in this worker. Default 100: agent nodes mostly wait on a
   * model or a tool, and a fan-out of 100 runs side by side. Bodies that keep the event loop busy
   * (CPU-bound) are bounded by the loop itself: while it is saturated, claims take one task at a
   * time (docs/workers.md, "Concurrency").
   */
  readonly concurrency?: number;
  /**
   * How long a claim (a run's fold, a task) lasts unless renewed: after a worker dies, this is
   * about how long its work waits before another worker takes it over. Default 10,000 ms.
   */
  readonly leaseMs?: number;
  /** The longest an idle worker waits before it looks for work again without a notification. Default 1,000 ms. */
  readonly pollMs?: number;
  /** Folds (runs whose history a worker advances) claimed at a time. Default 8. */
  readonly folds?: number;
  /**
   * When a fold leaves a run with one activation to run and nothing else in flight (a chain's
   * next node, a map's join, a one-node run) and this worker has room, it runs that activation
   * itself, under the run's lease, and commits its completion with what it folded: no task row,
   * no second claim. Fan-outs still go to the task queue, for every worker. Default true; false
   * queues every activation as a task.
   */
  readonly inline?: boolean;
  /**
   * How many times a run's fold may fail (its stored data cannot be read, or folding it throws)
   * before the worker ends the run as failed with FOLD_FAILED, naming the last cause. Counted in
   * the store, across workers; between failures the run waits pollMs x 2^(n-1), at most a
   * minute. Default 5.
   */
  readonly maxFoldFailures?: number;
  /**
   * The longest the worker waits between looks at the schedules of its graphs when none comes
   * due sooner (a schedule added elsewhere is found by then). Default 1,000 ms.
   */
  readonly schedulePollMs?: number;
  /**
   * How often the worker deletes the finished runs of its graphs past their `retention`
   * (docs/time.md, "Retention"), at most 100 a sweep. Default 60,000 ms; 0: never. Only when a
   * graph it runs declares `retention`.
   */
  readonly retentionSweepMs?: number;
  readonly clock?: Clock;
  /** What the worker tells as it goes: a CLI prints it, a test counts it. */
  readonly onEvent?: (event: WorkerEvent) => void;
  /**
   * Who is told of the node bodies this worker runs, e.g. `otel()` from `waymark/otel`: a span
   * per task, under the trace context its run stored. See docs/telemetry.md.
   */
  readonly telemetry?: Telemetry;
}

/**
 * Where a worker is in its life. `draining`: it claims nothing more and lets its work finish or
 * gives it back; `failed`: a loop met an error it cannot go on from, and it stopped all of it.
 */
export type WorkerStatus =
  | { readonly status: 'idle' }
  | { readonly status: 'running' }
  | { readonly status: 'draining' }
  | { readonly status: 'stopped' }
  | { readonly status: 'failed'; readonly error: unknown };

/**
 * A `waymark worker`: claims the work of the graphs it was given from a store's work queue,
 * folding runs' inboxes into their histories and running their nodes' bodies, up to
 * `concurrency` at a time. Every claim is a lease by the store's clock, renewed in one batch
 * while the work goes on ({@link LeaseKeeper}, the same keeper as an in-process driver's); a
 * worker that loses one stops that work. When its signal aborts it drains: claims nothing more,
 * lets its nodes finish within a lease's length, gives back what is left unrun, and returns. If
 * either of its loops fails, it stops the other and drains the same way, then rejects.
 *
 * @example
 * const stop = new AbortController();
 * process.on('SIGTERM', () => stop.abort());
 * await new Worker(store, [triage], { concurrency: 16 }).run(stop.signal);
 */
export class Worker {
  readonly #store: Store & WorkQueue;
  readonly #graphs: ReadonlyMap<string, CompiledGraph>;
  readonly #options: Required<Omit<WorkerOptions, 'onEvent' | 'telemetry'>> &
    Pick<WorkerOptions, 'onEvent' | 'telemetry'>;
  readonly #me: Owner & { done(): void };
  readonly #slots: Slots;
  readonly #committer: RunCommitter;
  /** Runs this worker drives itself, under their leases, by run id. */
  readonly #held = new Map<string, HeldDrive>();
  #state: WorkerStatus = { status: 'idle' };
  /**
   * The last claim of tasks found fewer than it had room for: the queue held nothing more this
   * worker could take. While the store is told of new tasks, a freed slot waits for that news
   * (or the next poll) rather than claiming from a queue known to be empty. A round of the
   * claim loop that had no room to claim clears it.
   */
  #drained = false;
  /** The count of failed folds the store gave for a run this worker failed to fold: its back-off. */
  readonly #seen = new Map<string, number>();

  constructor(
    store: Store & WorkQueue,
    graphs: readonly CompiledGraph[],
    options: WorkerOptions = {},
  ) {
    this.#store = store;
    this.#graphs = new Map(graphs.map((g) => [g.name, g]));
    this.#options = {
      concurrency: options.concurrency ?? defaultConcurrency,
      leaseMs: options.leaseMs ?? 10_000,
      pollMs: options.pollMs ?? 1_000,
      schedulePollMs: options.schedulePollMs ?? defaultSchedulePollMs,
      folds: options.folds ?? 8,
      inline: options.inline ?? true,
      maxFoldFailures: options.maxFoldFailures ?? defaultMaxFoldFailures,
      retentionSweepMs: options.retentionSweepMs ?? defaultRetentionSweepMs,
      clock: options.clock ?? systemClock,
      ...(options.onEvent !== undefined && { onEvent: options.onEvent }),
      ...(options.telemetry !== undefined && { telemetry: options.telemetry }),
    };
    checkLeaseCoversStatements(store, this.#options.leaseMs);
    this.#me = newOwner();
    this.#slots = new Slots(this.#options.concurrency);
    this.#committer = new RunCommitter(store);
  }

  /** This worker's owner id, as leases and `waymark ls` name it. */
  get id(): string {
    return this.#me.owner;
  }

  /** Where the worker is in its life. */
  get status(): WorkerStatus {
    return this.#state;
  }

  /**
   * Works until `signal` aborts, then drains and returns. Either loop failing (an error it
   * cannot go on from) stops the other and drains too; `run()` then rejects with that error,
   * once everything has stopped.
   * @throws WaymarkError `OPTIONS_INVALID` when the worker has run before.
   */
  async run(signal: AbortSignal): Promise<void> {
    if (this.#state.status !== 'idle')
      throw new WaymarkError(
        'OPTIONS_INVALID',
        `worker ${this.id} has run already: make a new one`,
        {
          retryable: false,
        },
      );
    this.#state = { status: 'running' };
    const { leaseMs } = this.#options;
    const graphs = [...this.#graphs.values()].map((g) => ({ name: g.name, hash: g.hash }));
    const me = this.#me;
    const register = () =>
      this.#store.registerWorker({ id: me.owner, host: me.host, pid: me.pid, graphs, leaseMs });
    // One stop for both loops: the caller's signal, or either loop failing.
    const stop = new AbortController();
    const onAbort = () => stop.abort(signal.reason);
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
    const keeper = new LeaseKeeper(this.#store, {
      leaseMs,
      register,
      watchStatus: true,
      onError: (error) => this.#tell({ type: 'error', error }),
    });
    // A worker that folds folds the results it writes (nudged below) and wakes nobody else
    // for them: every other worker would race to claim the run, which one of them holds
    // already. One that never folds, or folds no more (draining), wakes those that do.
    const finisher = new TaskFinisher(this.#store, {
      wake: () => this.#options.folds === 0 || this.#state.status !== 'running',
    });
    const tasks = new Tasks({
      store: this.#store,
      graphs: this.#graphs,
      clock: this.#options.clock,
      keeper,
      slots: this.#slots,
      finisher,
      ...(this.#options.telemetry !== undefined && {
        telemetry: { telemetry: this.#options.telemetry, worker: me.owner },
      }),
      tell: (event) => this.#tell(event),
      quiet: () => this.#drained && this.#store.listening,
    });
    let failure: { readonly error: unknown } | undefined;
    const fail = (error: unknown) => {
      failure ??= { error };
      stop.abort(error);
    };
    try {
      await register();
      // Renewals go on through the drain, for the nodes still finishing; they stop after it.
      keeper.start();
      // Folding and claiming are loops of their own: a slow fold never keeps a free slot idle,
      // and a claim never waits for a fold to end.
      await Promise.all([
        this.#loop(stop.signal, 'runs', () => this.#fold(graphs, keeper)).catch(fail),
        this.#loop(stop.signal, 'tasks', () => this.#claim(graphs, tasks)).catch(fail),
        this.#tickSchedules(stop.signal),
        sweepEvery(
          this.#store,
          [...this.#graphs.values()],
          {
            everyMs: this.#options.retentionSweepMs,
            clock: this.#options.clock,
            onError: (error) => this.#tell({ type: 'error', error }),
          },
          stop.signal,
        ),
      ]);
    } catch (error) {
      fail(error);
    } finally {
      signal.removeEventListener('abort', onAbort);
      this.#state = { status: 'draining' };
      await this.#drain(tasks);
      await keeper.stop();
      await this.#store.unregisterWorker(me.owner).catch((error: unknown) => {
        this.#tell({ type: 'error', error });
      });
      me.done();
      this.#state =
        failure === undefined ? { status: 'stopped' } : { status: 'failed', error: failure.error };
    }
    if (failure !== undefined) throw failure.error;
  }

  /**
   * Does `work` until `signal` aborts; after a round that found nothing, waits for more of its
   * kind: a notification of an inbox item wakes no claim of tasks, and one of a task no fold.
   */
  async #loop(signal: AbortSignal, kind: WorkKind, work: () => Promise<boolean>): Promise<void> {
    const { pollMs } = this.#options;
    const slots = this.#slots;
    while (!signal.aborted) {
      // What came in while this worker looked for work must not wait for the next poll.
      const notified = this.#store.notifiedOf(kind);
      const nudged = slots.nudged(kind);
      const found = await work().catch(this.#failed);
      // A slot of this worker freed, or a result it wrote arrived: look again at once.
      if (found || signal.aborted || slots.nudged(kind) !== nudged) continue;
      // One listener per wait, taken off after it (AbortSignal.any would pile up on `signal`).
      const nudge = new AbortController();
      const wake = () => nudge.abort(woken);
      signal.addEventListener('abort', wake, { once: true });
      const undo = slots.onNudge(kind, wake);
      try {
        const waitMs = kind === 'runs' ? await this.#untilDue(pollMs) : pollMs;
        await this.#store.waitForWork(waitMs, nudge.signal, notified, kind);
      } catch (error) {
        // The store's news of work is down for a moment: poll meanwhile. Anything else stops
        // the worker, which must not go on half-working.
        if (!isPassing(error)) throw error;
        this.#tell({ type: 'error', error });
        await systemClock.sleep(pollMs, nudge.signal);
      } finally {
        undo();
        signal.removeEventListener('abort', wake);
      }
    }
  }

  /**
   * Starts the runs the ticks of its graphs' schedules are due to start, as `enqueue` records
   * them: any worker of the graph folds them, and a tick's run id existing already (a host
   * killed after starting it, or another worker first) starts nothing.
   */
  #tickSchedules(signal: AbortSignal): Promise<void> {
    const store = this.#store;
    const { clock, schedulePollMs } = this.#options;
    return scheduleLoop(
      {
        store,
        graphs: this.#graphs,
        clock,
        pollMs: schedulePollMs,
        start: (graph, input, runId) =>
          enqueue(store, graph, input, { runId, clock }).then(
            () => {},
            (error: unknown) => {
              if (!isWaymarkError(error) || error.code !== 'RUN_EXISTS') throw error;
            },
          ),
        onError: this.#failed,
      },
      signal,
    );
  }

  /**
   * How long an idle fold loop waits: a poll, or less when a timer (a sleep, a deadline) comes
   * due sooner, so a run wakes when it is due and not at the next poll after (p50 900 ms late
   * with a 1 s poll before, npm run bench -- time). One indexed read of the soonest timer.
   */
  async #untilDue(pollMs: number): Promise<number> {
    const now = this.#options.clock.now();
    const next = await this.#store.nextTimerAt(now).catch(() => undefined);
    return next === undefined ? pollMs : Math.min(pollMs, Math.max(1, next - now + 1));
  }

  // A store that cannot be reached for a moment: the loop tries again after a pause.
  readonly #failed = (error: unknown): boolean => {
    this.#tell({ type: 'error', error });
    return false;
  };

  /**
   * Folds the runs that have something to fold, side by side; true if it should look again at
   * once: its claim was full, or a fold gave a run back (with its commit, or unchanged). A
   * worker that found the run held may have written a result meanwhile, and counts on the
   * holder to claim after giving it back. A run handed on to this worker's own driving keeps
   * its lease, so nobody is waiting for it, and a run that cannot be read or folded is tried
   * again later, not in a loop.
   */
  async #fold(
    graphs: readonly { name: string; hash: string }[],
    keeper: LeaseKeeper,
  ): Promise<boolean> {
    if (this.#options.folds <= 0) return false;
    const me = this.#me;
    const sent = monotonicMs();
    // The claim reads what each fold needs in the same round trip: the run and its inbox, both
    // under the lease, where nobody else consumes the inbox or commits but a cancellation,
    // which the fold meets as a conflict.
    const claimed = await this.#store.claimAndLoadRuns({
      owner: me.owner,
      host: me.host,
      pid: me.pid,
      leaseMs: this.#options.leaseMs,
      graphs,
      limit: this.#options.folds,
    });
    const owed = await Promise.all(claimed.map((c) => this.#foldOne(c, sent, keeper)));
    return claimed.length === this.#options.folds || owed.some(Boolean);
  }

  /**
   * Folds one claimed run; true if it gave the run back readable and not driven on here, so
   * that a result written meanwhile may wait for this worker's next claim.
   */
  async #foldOne(claimed: ClaimedRun, sent: number, keeper: LeaseKeeper): Promise<boolean> {
    const { lease } = claimed;
    const { runId } = lease;
    if ('error' in claimed) {
      await this.#poison(claimed, claimed.error);
      return false;
    }
    const graph = this.#graphs.get(claimed.run.run.graph);
    if (graph === undefined) {
      // Claimed by graph: only a run deleted meanwhile gets here.
      await this.#store.release(lease).catch(() => {});
      return false;
    }
    try {
      const folded = await foldRun(this.#store, graph, lease, this.#options.clock, claimed, {
        committer: this.#committer,
        keeper,
        sentAt: sent,
        leaseMs: this.#options.leaseMs,
        ...(this.#options.inline && { hold: this.#hold }),
        ...(this.#options.telemetry !== undefined && {
          telemetry: { telemetry: this.#options.telemetry, worker: this.#me.owner },
        }),
        onBooked: (committed, status) => this.#tell({ type: 'folded', runId, committed, status }),
        onAttempt: (activation, recorded) =>
          this.#tell({ type: 'task', runId, activation: activation.id, recorded }),
        onStopped: (activation) =>
          this.#tell({
            type: 'lost',
            runId,
            ...(activation !== undefined && { activation: activation.id }),
          }),
      });
      if (folded.committed === 0)
        this.#tell({ type: 'folded', runId, committed: 0, status: folded.status });
      if (folded.held === undefined) return true;
      this.#hand(runId, folded.held);
      return false;
    } catch (error) {
      if (isWaymarkError(error) && error.code === 'LEASE_LOST') {
        this.#tell({ type: 'lost', runId });
        return false;
      }
      if (isPassing(error)) {
        this.#tell({ type: 'error', error });
        await this.#store.release(lease).catch(() => {});
        return false;
      }
      await this.#poison(claimed, error);
      return false;
    }
  }

  /**
   * A run whose fold failed for what it holds: counted in the store and kept under its lease
   * for a back-off that doubles with each failure, so that no worker claims it again in a loop;
   * past the limit it is failed, naming the cause, and the worker goes on with other runs.
   */
  async #poison(claimed: ClaimedRun, error: unknown): Promise<void> {
    const { lease } = claimed;
    this.#tell({ type: 'error', error });
    try {
      const { pollMs, maxFoldFailures } = this.#options;
      const failures = await this.#store.foldFailed(
        lease,
        Math.min(pollMs * 2 ** Math.min(30, this.#failuresSeen(lease.runId)), maxFoldRetryMs),
      );
      this.#seen.set(lease.runId, failures);
      if (failures < maxFoldFailures) return;
      const failed = await this.#store.failRun(lease, {
        error: JSON.stringify(foldFailure(lease.runId, this.#nodeOf(claimed), error, failures)),
        at: this.#options.clock.now(),
      });
      this.#seen.delete(lease.runId);
      if (failed)
        this.#tell({ type: 'folded', runId: lease.runId, committed: 0, status: 'failed' });
    } catch (failure) {
      // The store is away: the lease runs out, and the run is claimed again after it.
      this.#tell({ type: 'error', error: failure });
    }
  }

  /** Where a run that cannot be folded stands, as far as can be told without folding it. */
  #nodeOf(claimed: ClaimedRun): string {
    if (!('run' in claimed)) return '';
    return this.#graphs.get(claimed.run.run.graph)?.entry ?? '';
  }

  /** Failed folds of a run before this one, as this worker last learnt them. */
  #failuresSeen(runId: string): number {
    return this.#seen.get(runId) ?? 0;
  }

  /** Keeps track of a run this worker drives on, until its drive ends. */
  #hand(runId: string, held: HeldDrive): void {
    this.#held.set(runId, held);
    held.ended
      .catch(async (error: unknown) => {
        if (isWaymarkError(error) && error.code === 'LEASE_LOST') {
          const activation = held.drive.snapshot.pending[0]?.id;
          this.#tell({ type: 'lost', runId, ...(activation !== undefined && { activation }) });
          return;
        }
        this.#tell({ type: 'error', error });
        const lease = held.drive.lease;
        if (lease !== undefined) await this.#store.release(lease).catch(() => {});
      })
      .finally(() => {
        if (this.#held.get(runId) === held) this.#held.delete(runId);
        // It may have set a timer (a sleep, a deadline) an idle fold loop must wait for.
        if (held.drive.snapshot.status === 'waiting') this.#slots.nudge('runs');
      });
  }

  /**
   * Claims as many tasks as it has room for and starts them; true if it filled that room, so
   * that the queue may hold more.
   */
  async #claim(graphs: readonly { name: string; hash: string }[], tasks: Tasks): Promise<boolean> {
    const room = this.#slots.room();
    // Woken with no room to claim, by news of tasks or a poll: the queue may hold work now, so
    // the next slot that frees claims.
    if (room <= 0) {
      this.#drained = false;
      return false;
    }
    const me = this.#me;
    const sent = monotonicMs();
    const claimed = await this.#store.claimTasks({
      owner: me.owner,
      host: me.host,
      pid: me.pid,
      leaseMs: this.#options.leaseMs,
      graphs,
      limit: room,
    });
    for (const task of claimed) tasks.start(task, sent);
    this.#drained = claimed.length < room;
    return !this.#drained;
  }

  /** A slot for a run's next activation, if this worker has room and is not draining. */
  readonly #hold = (): Slot | undefined => {
    if (this.#state.status !== 'running') return undefined;
    const slot = this.#slots.take();
    if (slot === undefined) return undefined;
    return { free: () => this.#slots.free(slot, this.#drained && this.#store.listening) };
  };

  /** Lets the nodes in flight finish within a lease's length; gives back what is left unrun. */
  async #drain(tasks: Tasks): Promise<void> {
    const grace = this.#options.leaseMs;
    const held = [...this.#held.values()];
    for (const { drive } of held) drive.drain(grace);
    const stop = new AbortController();
    await Promise.all([
      tasks.drain(grace, stop.signal),
      ...held.map((h) => h.ended.catch(() => {})),
    ]).finally(() => stop.abort());
  }

  #tell(event: WorkerEvent): void {
    this.#options.onEvent?.(event);
  }
}
