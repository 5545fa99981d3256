import { isWaymarkError } from '../error/waymark-error.js';
import type { CompiledGraph } from '../graph/compiled.js';
import type { ClaimedRun, ClaimedTask, Store, WorkKind, WorkQueue } from '../store/store.js';
import { type Clock, monotonicMs, systemClock } from './clock.js';
import { foldRun } from './fold.js';
import type { HeldRun, Slot } from './held-run.js';
import { newOwner, type Owner } from './identity.js';
import { RunCommitter } from './run-committer.js';
import { attemptOf, runTask } from './run-task.js';
import { TaskFinisher } from './task-finisher.js';
import type { Telemetry } from './telemetry.js';

// Why a wait for work ends early: one reason for all, not a DOMException made at every wake.
const woken = new Error('there may be work');

/** Options of a {@link Worker}. */
export interface WorkerOptions {
  /** Most node bodies running at once in this worker. Default 8. */
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
  readonly clock?: Clock;
  /** What the worker tells as it goes: a CLI prints it, a test counts it. */
  readonly onEvent?: (event: WorkerEvent) => void;
  /**
   * Who is told of the node bodies this worker runs, e.g. `otel()` from `waymark/otel`: a span
   * per task, under the trace context its run stored. See docs/telemetry.md.
   */
  readonly telemetry?: Telemetry;
}

/** What a worker did, as it does it. */
export type WorkerEvent =
  | {
      readonly type: 'folded';
      readonly runId: string;
      readonly committed: number;
      readonly status: string;
    }
  | {
      readonly type: 'task';
      readonly runId: string;
      readonly activation: string;
      readonly recorded: boolean;
    }
  | { readonly type: 'lost'; readonly runId: string; readonly activation?: string }
  | { readonly type: 'error'; readonly error: unknown };

/**
 * When a lease this worker holds was last known to be good, by {@link monotonicMs}: when the
 * claim or the renewal that set its expiry was sent. The database stamped that expiry no
 * earlier, so counting from here never finds a lease later than it is.
 */
interface Kept {
  at: number;
  /** It could not be renewed in time: this worker stopped the work, and writes no failure of it. */
  lapsed: boolean;
}

/** A task whose body runs in this worker. */
interface InFlight {
  readonly task: ClaimedTask;
  readonly stop: AbortController;
  readonly done: Promise<void>;
  readonly slot: { held: boolean };
  readonly kept: Kept;
}

/** A run this worker drives itself, under the run's lease. */
interface Held {
  readonly run: HeldRun;
  readonly done: Promise<void>;
  readonly kept: Kept;
}

/**
 * A `waymark worker`: claims the work of the graphs it was given from a store's work queue,
 * folding runs' inboxes into their histories and running their nodes' bodies, up to
 * `concurrency` at a time. Every claim is a lease by the store's clock, renewed in one batch
 * while the work goes on; a worker that loses one stops that work. When its signal aborts it
 * drains: claims nothing more, lets its nodes finish within a lease's length, gives back what is
 * left unrun, and returns.
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
  readonly #finisher: TaskFinisher;
  readonly #committer: RunCommitter;
  /**
   * Wakes a loop of this worker waiting for its kind of work: `tasks` when a slot was freed,
   * `runs` when a result it wrote is in its run's inbox.
   */
  readonly #nudges: Record<WorkKind, Set<() => void>> = { runs: new Set(), tasks: new Set() };
  /** How often each kind of nudge happened so far: a loop looks again if one did meanwhile. */
  readonly #nudged: Record<WorkKind, number> = { runs: 0, tasks: 0 };
  /**
   * Node bodies running now: what `concurrency` bounds. A task whose body ended is still held
   * (its lease renewed) until its result is written, but its slot is free for the next one.
   */
  #running = 0;
  /** Runs this worker holds to run their sole next activation itself, by run id. */
  readonly #held = new Map<string, Held>();
  /** A nudge of the claim loop for freed slots is due at the end of this loop turn. */
  #freed = false;
  /**
   * The last claim of tasks found fewer than it had room for: the queue held nothing more this
   * worker could take. While the store is told of new tasks, a freed slot waits for that news
   * (or the next poll) rather than claiming from a queue known to be empty. A round of the
   * claim loop that had no room to claim clears it.
   */
  #drained = false;
  /** Set once the worker drains: it takes no more work to run itself. */
  #draining = false;
  /** The signal the worker runs until: once it aborts, the fold loop folds nothing more. */
  #stopping: AbortSignal | undefined;
  readonly #inFlight = new Map<string, InFlight>();

  constructor(
    store: Store & WorkQueue,
    graphs: readonly CompiledGraph[],
    options: WorkerOptions = {},
  ) {
    this.#store = store;
    this.#graphs = new Map(graphs.map((g) => [g.name, g]));
    this.#options = {
      concurrency: options.concurrency ?? 8,
      leaseMs: options.leaseMs ?? 10_000,
      pollMs: options.pollMs ?? 1_000,
      folds: options.folds ?? 8,
      inline: options.inline ?? true,
      clock: options.clock ?? systemClock,
      ...(options.onEvent !== undefined && { onEvent: options.onEvent }),
      ...(options.telemetry !== undefined && { telemetry: options.telemetry }),
    };
    this.#me = newOwner();
    // A worker that folds folds the results it writes (nudged below) and wakes nobody else
    // for them: every other worker would race to claim the run, which one of them holds
    // already. One that never folds, or folds no more (stopping), wakes those that do.
    this.#finisher = new TaskFinisher(store, {
      wake: () => this.#options.folds === 0 || this.#stopping?.aborted !== false,
    });
    this.#committer = new RunCommitter(store);
  }

  /** This worker's owner id, as leases and `waymark ls` name it. */
  get id(): string {
    return this.#me.owner;
  }

  /** Works until `signal` aborts, then drains and returns. */
  async run(signal: AbortSignal): Promise<void> {
    const { leaseMs } = this.#options;
    const graphs = [...this.#graphs.values()].map((g) => ({ name: g.name, hash: g.hash }));
    const me = this.#me;
    const register = () =>
      this.#store.registerWorker({ id: me.owner, host: me.host, pid: me.pid, graphs, leaseMs });
    this.#stopping = signal;
    await register();
    // Renewals go on through the drain, for the nodes still finishing; they stop after it.
    const kept = new AbortController();
    const keeper = this.#keep(register, kept.signal);
    try {
      // Folding and claiming are loops of their own: a slow fold never keeps a free slot idle,
      // and a claim never waits for a fold to end.
      await Promise.all([
        this.#loop(signal, 'runs', () => this.#fold(graphs)),
        this.#loop(signal, 'tasks', () => this.#claim(graphs)),
      ]);
    } finally {
      await this.#drain();
      kept.abort();
      await keeper;
      await this.#store.unregisterWorker(me.owner).catch(() => {});
      me.done();
    }
  }

  /**
   * Does `work` until `signal` aborts; after a round that found nothing, waits for more of its
   * kind: a notification of an inbox item wakes no claim of tasks, and one of a task no fold.
   */
  async #loop(signal: AbortSignal, kind: WorkKind, work: () => Promise<boolean>): Promise<void> {
    const { pollMs } = this.#options;
    while (!signal.aborted) {
      // What came in while this worker looked for work must not wait for the next poll.
      const notified = this.#store.notifiedOf(kind);
      const nudged = this.#nudged[kind];
      const found = await work().catch(this.#failed);
      // A slot of this worker freed, or a result it wrote arrived: look again at once.
      if (found || signal.aborted || this.#nudged[kind] !== nudged) continue;
      // One listener per wait, taken off after it (AbortSignal.any would pile up on `signal`).
      const nudge = new AbortController();
      const wake = () => nudge.abort(woken);
      signal.addEventListener('abort', wake, { once: true });
      this.#nudges[kind].add(wake);
      await this.#store.waitForWork(pollMs, nudge.signal, notified, kind);
      this.#nudges[kind].delete(wake);
      signal.removeEventListener('abort', wake);
    }
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
   * its lease, so nobody is waiting for it, and a run that cannot be read cannot be folded by
   * another claim either: a claim that took less than it could, and owes no such claim, waits
   * for news as an empty one does (a damaged run is tried again at the next poll, not in a
   * loop).
   */
  async #fold(graphs: readonly { name: string; hash: string }[]): Promise<boolean> {
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
    const owed = await Promise.all(claimed.map((c) => this.#foldOne(c, sent)));
    return claimed.length === this.#options.folds || owed.some(Boolean);
  }

  /**
   * Folds one claimed run; true if it gave the run back readable and not driven on here, so
   * that a result written meanwhile may wait for this worker's next claim.
   */
  async #foldOne(claimed: ClaimedRun, sent: number): Promise<boolean> {
    const { lease } = claimed;
    if ('error' in claimed) {
      this.#tell({ type: 'error', error: claimed.error });
      await this.#store.release(lease).catch(() => {});
      return false;
    }
    let released = false;
    try {
      const graph = this.#graphs.get(claimed.run.run.graph);
      if (graph === undefined) return false; // claimed by graph: only a deleted run gets here
      const folded = await foldRun(this.#store, graph, lease, this.#options.clock, claimed, {
        committer: this.#committer,
        ...(this.#options.inline && { hold: this.#hold }),
      });
      // A held run gives its lease up itself, when it is done with it.
      released = folded.released || folded.held !== undefined;
      if (folded.held !== undefined) this.#drive(folded.held, graph, sent);
      this.#tell({
        type: 'folded',
        runId: lease.runId,
        committed: folded.committed,
        status: folded.status,
      });
      return folded.held === undefined;
    } catch (error) {
      if (isWaymarkError(error) && error.code === 'LEASE_LOST')
        this.#tell({ type: 'lost', runId: lease.runId });
      else this.#tell({ type: 'error', error });
      return true;
    } finally {
      // A fold that committed gave the lease up with its commit.
      if (!released) await this.#store.release(lease).catch(() => {});
    }
  }

  /**
   * Claims as many tasks as it has room for and starts them; true if it filled that room, so
   * that the queue may hold more.
   */
  async #claim(graphs: readonly { name: string; hash: string }[]): Promise<boolean> {
    const room = this.#options.concurrency - this.#running;
    // Woken with no room to claim, by news of tasks or a poll: the queue may hold work now, so
    // the next slot that frees claims.
    if (room <= 0) {
      this.#drained = false;
      return false;
    }
    const me = this.#me;
    const sent = monotonicMs();
    const tasks = await this.#store.claimTasks({
      owner: me.owner,
      host: me.host,
      pid: me.pid,
      leaseMs: this.#options.leaseMs,
      graphs,
      limit: room,
    });
    for (const task of tasks) this.#start(task, sent);
    this.#drained = tasks.length < room;
    return !this.#drained;
  }

  #start(task: ClaimedTask, sent: number): void {
    const key = `${task.runId}/${task.activation}`;
    const stop = new AbortController();
    const graph = this.#graphs.get(task.graph)!;
    const slot = { held: true };
    const kept: Kept = { at: sent, lapsed: false };
    this.#running++;
    const done = runTask(this.#store, graph, task, {
      clock: this.#options.clock,
      signal: stop.signal,
      // The body ended: its slot is free while its result is written. Once the result is in
      // the inbox, this worker's fold loop claims the run (or finds that another fold holds
      // it: that one claims again after its commit, and finds the result there).
      finish: async (t, attempt, at, ended) => {
        this.#free(slot);
        // Stopped for a lease this worker could not renew: a failure is most likely the stop's
        // own doing, and the next claim runs the node again. A body that completed anyway is
        // offered to the fence like any result: taken over, it is refused.
        if (kept.lapsed && ended.event.type !== 'completed') return false;
        const held = await this.#finisher.finish(t, attempt, at);
        if (held) this.#nudge('runs');
        return held;
      },
      ...(this.#options.telemetry !== undefined && {
        telemetry: { telemetry: this.#options.telemetry, worker: this.#me.owner },
      }),
    })
      .then((recorded) => {
        this.#tell({ type: 'task', runId: task.runId, activation: task.activation, recorded });
        if (!recorded) this.#tell({ type: 'lost', runId: task.runId, activation: task.activation });
      })
      .catch((error: unknown) => this.#tell({ type: 'error', error }))
      .finally(() => {
        // Not the claim that came after it: a task stopped for its lease may be claimed again
        // by this worker while its body, deaf to its signal, still runs.
        if (this.#inFlight.get(key)?.kept === kept) this.#inFlight.delete(key);
        this.#free(slot);
      });
    this.#inFlight.set(key, { task, stop, done, slot, kept });
  }

  /** A slot for a run's next activation, if this worker has room and is not draining. */
  readonly #hold = (): Slot | undefined => {
    if (this.#draining || this.#running >= this.#options.concurrency) return undefined;
    const slot = { held: true };
    this.#running++;
    return { free: () => this.#free(slot) };
  };

  /** Runs a held run's activations, one after another while it stays sequential; then lets it go. */
  #drive(run: HeldRun, graph: CompiledGraph, sent: number): void {
    const { runId } = run.lease;
    const { clock, telemetry } = this.#options;
    // The telemetry of the attempt running now: told whether its commit landed.
    let ended: ((recorded: boolean) => void) | undefined;
    const done = run
      .drive({
        execute: (node, input, signal) =>
          attemptOf(this.#store, graph, runId, node, input, {
            clock,
            signal,
            ...(telemetry !== undefined && { telemetry: { telemetry, worker: this.#me.owner } }),
            onEnd: (end) => {
              ended = end;
            },
          }),
        hold: this.#hold,
        committed: (booked, activation, status) => {
          ended?.(true);
          ended = undefined;
          this.#tell({ type: 'task', runId, activation: activation.id, recorded: true });
          this.#tell({ type: 'folded', runId, committed: booked.committed, status });
        },
      })
      .then(
        async ({ released }) => {
          if (!released) await this.#store.release(run.lease).catch(() => {});
        },
        async (error: unknown) => {
          ended?.(false);
          if (isWaymarkError(error) && error.code === 'LEASE_LOST') {
            this.#tell({ type: 'lost', runId, activation: run.activation.id });
            return;
          }
          this.#tell({ type: 'error', error });
          await this.#store.release(run.lease).catch(() => {});
        },
      )
      .finally(() => {
        if (this.#held.get(runId)?.run === run) this.#held.delete(runId);
      });
    this.#held.set(runId, { run, done, kept: { at: sent, lapsed: false } });
  }

  /**
   * Gives a task's slot back, once, and has the claim loop look for more work once the timers
   * and I/O callbacks of this loop turn have run: the bodies that end together (a wave of
   * branches whose timers fire in one turn) free their slots for one claim, not one claim for
   * the first slot and another for the rest once it returns.
   */
  #free(slot: { held: boolean }): void {
    if (!slot.held) return;
    slot.held = false;
    this.#running--;
    if (this.#freed || (this.#drained && this.#store.listening)) return;
    this.#freed = true;
    setImmediate(() => {
      this.#freed = false;
      this.#nudge('tasks');
    });
  }

  #nudge(kind: WorkKind): void {
    this.#nudged[kind]++;
    for (const wake of this.#nudges[kind]) wake();
  }

  /**
   * Renews this worker's registration and every lease it holds in one batch, every third of a
   * lease; a task whose lease is lost is told to stop (its signal aborts). Work whose lease
   * could not be renewed in time (the store unreachable, or a renewal that hangs) is stopped
   * before that lease can expire: by then another worker may take it over.
   */
  async #keep(register: () => Promise<void>, signal: AbortSignal): Promise<void> {
    const { leaseMs } = this.#options;
    const every = Math.max(1, Math.floor(leaseMs / 3));
    // Not one at a time: a renewal whose reply never comes (a connection dead without a word)
    // must not keep the next ones from being tried once the database is back.
    const renewing = new Set<Promise<void>>();
    while (!signal.aborted) {
      await systemClock.sleep(every, signal);
      if (signal.aborted) break;
      // On every tick, whether the renewal before came back or not: one that hangs must not
      // keep the work going past its leases.
      this.#lapse(every);
      const renewal = this.#renew(register, leaseMs).finally(() => renewing.delete(renewal));
      renewing.add(renewal);
    }
    // A registration still in flight could land after the worker unregisters; a hung one is
    // not waited for longer than a tick.
    if (renewing.size > 0) await Promise.race([Promise.all(renewing), systemClock.sleep(every)]);
  }

  async #renew(register: () => Promise<void>, leaseMs: number): Promise<void> {
    const sent = monotonicMs();
    const renewals = [register(), this.#renewTasks(leaseMs, sent), this.#renewHeld(leaseMs, sent)];
    for (const result of await Promise.allSettled(renewals)) {
      if (result.status === 'rejected') this.#tell({ type: 'error', error: result.reason });
    }
  }

  async #renewTasks(leaseMs: number, sent: number): Promise<void> {
    const held = [...this.#inFlight.values()];
    if (held.length === 0) return;
    const { lost } = await this.#store.renewTasks(
      held.map((h) => h.task),
      leaseMs,
    );
    for (const h of held) h.kept.at = sent;
    for (const key of lost) {
      // Cancelled, or taken over: nothing this attempt does can be recorded now, so the
      // worker stops waiting for it and frees its slot.
      const held = this.#inFlight.get(key);
      if (held === undefined) continue;
      held.stop.abort(new Error('this worker lost the task'));
      this.#inFlight.delete(key);
      this.#free(held.slot);
      this.#tell({ type: 'lost', runId: held.task.runId, activation: held.task.activation });
    }
  }

  /**
   * Renews the leases of the runs this worker holds, and stops the body of one that another
   * process stopped meanwhile (a cancellation takes no lease; a task would have been deleted):
   * as soon as a task's would be.
   */
  async #renewHeld(leaseMs: number, sent: number): Promise<void> {
    const entries = [...this.#held.values()];
    if (entries.length === 0) return;
    const held = entries.map((h) => h.run);
    const { lost } = await this.#store.renew(
      held.map((h) => h.lease),
      leaseMs,
    );
    for (const h of entries) h.kept.at = sent;
    for (const runId of lost) {
      const held = this.#held.get(runId)?.run;
      if (held === undefined) continue;
      held.stop('lost');
      this.#tell({ type: 'lost', runId, activation: held.activation.id });
    }
    await Promise.all(
      held
        .filter((h) => !lost.includes(h.lease.runId))
        .map(async (h) => {
          const record = await this.#store.getRun(h.lease.runId);
          if (record !== undefined && record.status === 'running') return;
          h.stop('stopped');
          this.#tell({ type: 'lost', runId: h.lease.runId, activation: h.activation.id });
        }),
    );
  }

  /**
   * Stops the work whose lease may expire before the next renewal could land: its signal
   * aborts, a failure it ends in is not written, and its lease is left to expire, so the next
   * claim (epoch + 1) runs it again; a body deaf to its signal that completes is written, fenced
   * by its epoch like any result. Only the store's clock decides expiry; this one counts from
   * before the claim or renewal was sent, so it stops the work earlier, never later.
   */
  #lapse(every: number): void {
    const { leaseMs } = this.#options;
    const late = (kept: Kept) => !kept.lapsed && monotonicMs() + every >= kept.at + leaseMs;
    for (const [key, held] of this.#inFlight) {
      if (!late(held.kept)) continue;
      held.kept.lapsed = true;
      held.stop.abort(new Error("this worker could not renew the task's lease in time"));
      this.#inFlight.delete(key);
      this.#free(held.slot);
      this.#tell({ type: 'lost', runId: held.task.runId, activation: held.task.activation });
    }
    for (const [runId, held] of this.#held) {
      if (!late(held.kept)) continue;
      held.kept.lapsed = true;
      held.run.stop('lapsed');
      this.#tell({ type: 'lost', runId, activation: held.run.activation.id });
    }
  }

  /** Lets the nodes in flight finish within a lease's length; gives back what is left unrun. */
  async #drain(): Promise<void> {
    this.#draining = true;
    const pending = [
      ...[...this.#inFlight.values()].map((p) => p.done),
      ...[...this.#held.values()].map((h) => h.done),
    ];
    if (pending.length === 0) return;
    const grace = new Promise<void>((resolve) =>
      setTimeout(resolve, this.#options.leaseMs).unref(),
    );
    await Promise.race([Promise.all(pending), grace]);
    for (const { task, stop } of this.#inFlight.values()) {
      stop.abort(new Error('the worker is shutting down'));
      await this.#store.releaseTask(task).catch(() => {});
    }
    // A body that ignores its signal must not keep the run from the next claim.
    for (const { run } of this.#held.values()) {
      run.stop('drain');
      await this.#store.release(run.lease).catch(() => {});
      // A wake-up: another worker folds it now rather than at its next poll.
      await this.#store.wake(run.lease.runId, this.#options.clock.now()).catch(() => {});
    }
  }

  #tell(event: WorkerEvent): void {
    this.#options.onEvent?.(event);
  }
}
