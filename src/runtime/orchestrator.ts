import { isWaymarkError, WaymarkError } from '../error/waymark-error.js';
import type { CompiledGraph } from '../graph/compiled.js';
import type { Lease, Store } from '../store/store.js';
import { type Clock, systemClock } from './clock.js';
import { commitExtras } from './commit-extras.js';
import type { Activation, Command, RunEvent, Snapshot } from './core/snapshot.js';
import { step } from './core/step.js';
import type { Attempt } from './execute.js';
import { type ExecutorOptions, LocalExecutor } from './executor.js';
import { Inbox } from './inbox.js';
import type { Journal } from './journal.js';
import { LeaseKeeper } from './ownership.js';
import { resultOf } from './result.js';
import type { RunOptions, RunResult } from './run-types.js';
import { stepEvents } from './stream.js';
import type { SegmentTelemetry } from './telemetry.js';
import { tellStep } from './telemetry-step.js';
import { type TraceEntry, traceOf } from './trace.js';
import { TraceRecorder } from './trace-recorder.js';

/** What an orchestrator drives a run with: the caller's options, and where it records. */
export interface OrchestratorOptions
  extends Pick<
      RunOptions,
      | 'signal'
      | 'onTraceEntry'
      | 'onAttemptStart'
      | 'clock'
      | 'store'
      | 'watch'
      | 'watchStates'
      | 'telemetry'
    >,
    Omit<ExecutorOptions, 'clock' | 'onAttemptStart'> {
  readonly journal?: Journal;
  /** The run's lease, held for this driver; renewed while it drives, released when it stops. */
  readonly lease?: { readonly lease: Lease; readonly leaseMs: number; readonly done: () => void };
  /** The trace context the run's previous segment stored (a resume read it), for a span link. */
  readonly previousTrace?: string | undefined;
}

type Item = { readonly event: RunEvent; readonly attempt?: Attempt } | { readonly lost: unknown };

// What in-flight nodes' signals abort with when a drive ends: one object, made once (an Error
// captures a stack, and every run ends).
const runStopped = new Error('the run stopped');

// Why a deadline timer is disarmed: one reason object, not a DOMException per run.
const disarmed = new Error('the deadline was disarmed');

// Conflicts come from other processes appending to the run (a cancellation); a run that keeps
// conflicting is not being left alone, and this driver stops rather than spin.
const maxConflictsInARow = 100;

// A store error marked retryable (another writer holds SQLite's lock past the busy timeout) is
// worth a few more tries before the run gives up; 50, 100, 200, 400, 800 ms on the run's clock.
const storeRetries = 5;
const storeBackoffMs = 50;

/**
 * The orchestrator half of the orchestrator/executor split: it folds what happens to a run
 * (attempts that ended, signals, the deadline) through the pure `step`, commits each step
 * before anything it schedules starts (write-ahead), and hands the activations a commit
 * scheduled to the executor. A commit is fenced by seq and by the lease epoch: on a conflict it
 * reads the events another process appended, folds them in, and takes its own event again;
 * when its lease is lost it stops every node in flight and rejects with `LEASE_LOST`.
 */
export class Orchestrator {
  readonly #graph: CompiledGraph;
  readonly #options: OrchestratorOptions;
  readonly #clock: Clock;
  readonly #inbox = new Inbox<Item>();
  readonly #trace: TraceRecorder;
  readonly #executor: LocalExecutor;
  // Set once a cancellation or the deadline is in: no new work starts after it.
  #stopAsked = false;
  // Set once the last commit gave the lease up: nothing more to release.
  #released = false;
  #deadline: { readonly at: number; readonly stop: AbortController } | undefined;
  // The run and its last commit told to `watch`: where an ephemeral event sits in the stream.
  #runId = '';
  #seq = 0;

  constructor(graph: CompiledGraph, options: OrchestratorOptions) {
    this.#graph = graph;
    this.#options = options;
    this.#clock = options.clock ?? systemClock;
    this.#trace = new TraceRecorder(options.onTraceEntry);
    this.#executor = new LocalExecutor(
      graph,
      {
        clock: this.#clock,
        ledger: options.ledger,
        hashInputs: options.hashInputs,
        ...(options.reuse !== undefined && { reuse: options.reuse }),
        ...(options.onAttemptStart !== undefined && { onAttemptStart: options.onAttemptStart }),
        ...(options.watch !== undefined && {
          onEphemeral: (activation, name, data, at) =>
            this.#tellEphemeral(activation, name, data, at),
        }),
      },
      (attempt) => this.#inbox.push({ event: attempt.event, attempt }),
    );
  }

  /** Feeds `first` (then whatever happens) through `step` until the run stops. */
  async drive(initial: Snapshot, first: readonly RunEvent[]): Promise<RunResult> {
    const queued: Item[] = first.map((event) => ({ event }));
    let snapshot = initial;
    let item = queued.shift()!;
    const unwatch = this.#watchSignal();
    const keeper = this.#keepLease();
    const journal = this.#options.journal;
    const { watch } = this.#options;
    // Without a journal the stream still counts commits, as a store would.
    let seq = journal?.seq ?? 0;
    this.#runId = initial.runId;
    this.#seq = seq;
    let conflicts = 0;
    let unavailable = 0;
    const segment = this.#segment(initial, first);
    let thrown: unknown;
    try {
      for (;;) {
        if ('lost' in item) throw lostLease(snapshot.runId, item.lost);
        const { event, attempt } = item;
        const result = step(this.#graph, snapshot, event);
        const after = result.snapshot;
        // An event about nothing pending (late, stale, after a stop) changes nothing: no commit.
        if (after !== snapshot || result.commands.length > 0) {
          const now = this.#clock.now();
          const entries = this.#entries(
            result.outcome,
            event,
            attempt,
            after,
            result.commands,
            queued.length === 0,
            now,
          );
          if (journal !== undefined) {
            // The last commit of this drive gives the lease up with it: no write of its own.
            const last = after.status !== 'running' && queued.length === 0;
            try {
              await journal.record(
                event,
                after,
                entries,
                commitExtras(this.#graph, event, snapshot, after, result.commands, now),
                last && this.#options.lease !== undefined,
              );
              if (last) this.#released = true;
              conflicts = 0;
              unavailable = 0;
            } catch (error) {
              if (!isWaymarkError(error)) throw error;
              if (error.code === 'STORE_CONFLICT' && ++conflicts <= maxConflictsInARow) {
                // Another process appended to the run (or our own commit landed before the
                // connection failed): fold its events in, then take ours again.
                snapshot = await journal.catchUp(snapshot, (stored, before, caught, stepped) => {
                  if (watch === undefined) return;
                  const states = { states: this.#options.watchStates === true };
                  const { runId } = before;
                  for (const told of stepEvents(
                    runId,
                    stored.seq,
                    stored.at,
                    before,
                    caught,
                    stepped,
                    states,
                  ))
                    watch(told);
                });
                continue;
              }
              const retryable = error.code.startsWith('STORE_') && error.retryable;
              if (retryable && ++unavailable <= storeRetries) {
                // Nothing was written: the same step is taken again after a pause.
                await this.#clock.sleep(storeBackoffMs * 2 ** (unavailable - 1));
                continue;
              }
              throw error;
            }
          }
          this.#trace.accept(entries);
          if (segment !== undefined)
            tellStep(segment, this.#graph, snapshot, event, result, entries);
          if (watch !== undefined) {
            seq = journal?.seq ?? seq + 1;
            this.#seq = seq;
            const at = journal?.lastAt ?? now;
            const states = { states: this.#options.watchStates === true };
            for (const told of stepEvents(snapshot.runId, seq, at, snapshot, event, result, states))
              watch(told);
          }
          snapshot = after;
          for (const command of result.commands) {
            if (command.type === 'abort') this.#executor.abort(command.activations);
          }
          this.#armDeadline(snapshot);
        }
        if (snapshot.status !== 'running') {
          // A stopped checkpoint may still have events lined up (migrated, then resumed).
          const next = queued.shift();
          if (next === undefined) break;
          item = next;
          continue;
        }
        // A stop already asked for (a signal aborted before the start) wins over new work.
        if (!this.#stopAsked) {
          for (const command of result.commands) {
            if (command.type === 'execute') this.#executor.execute(command.activation, snapshot);
          }
        }
        item = queued.shift() ?? this.#inbox.take() ?? (await this.#inbox.next());
      }
    } catch (error) {
      thrown = error;
      throw error;
    } finally {
      unwatch();
      this.#deadline?.stop.abort(disarmed);
      this.#executor.stop(runStopped);
      keeper?.stop();
      await this.#release(keeper);
      segment?.ended({
        status: snapshot.status,
        steps: snapshot.steps,
        ...('error' in snapshot && { error: snapshot.error }),
        ...(thrown !== undefined && { thrown }),
      });
    }
    return resultOf(snapshot, traceOf(this.#trace.entries), this.#graph);
  }

  /** Tells `watch` what an attempt emitted with `ephemeral: true`, as it happens. */
  #tellEphemeral(activation: Activation, name: string, data: unknown, at: number): void {
    const seq = this.#options.journal?.seq ?? this.#seq;
    this.#options.watch?.({
      // `seq` alone is "after every event of commit seq": a watcher resuming after this one
      // resumes after the last recorded event before it.
      offset: String(seq),
      runId: this.#runId,
      seq,
      at,
      type: 'delta',
      ephemeral: true,
      activation: activation.id,
      node: activation.node,
      attempt: activation.attempt,
      name,
      data,
    });
  }

  /** Starts this drive's segment with the caller's telemetry, if it observes this one. */
  #segment(initial: Snapshot, first: readonly RunEvent[]): SegmentTelemetry | undefined {
    const { telemetry, journal, previousTrace } = this.#options;
    const stamp = initial.graph;
    const segment = telemetry?.segment({
      runId: initial.runId,
      graph: { name: stamp.name, hash: stamp.hash, version: stamp.version },
      cause: first[0]?.type ?? 'resumed',
      readBack: initial.steps,
      previous: previousTrace,
    });
    // A segment nobody traces keeps the trace context it found: the next traced one links to
    // the last traced one, not to nothing.
    if (segment?.traceparent !== undefined) journal?.keepTrace(segment.traceparent, true);
    else journal?.keepTrace(previousTrace, false);
    if (segment !== undefined) this.#executor.observe(segment);
    return segment;
  }

  /** The trace entries a step ends: its attempt's, and those of attempts it cancelled or abandoned. */
  #entries(
    outcome: Parameters<TraceRecorder['entryFor']>[0],
    event: RunEvent,
    attempt: Attempt | undefined,
    after: Snapshot,
    commands: readonly Command[],
    lastQueued: boolean,
    now: number,
  ): TraceEntry[] {
    const entries: TraceEntry[] = [];
    const own = this.#trace.entryFor(outcome, event, attempt, now);
    if (own !== undefined) entries.push(own);
    const inFlight = this.#executor.inFlight;
    if (inFlight.size === 0) return entries;
    for (const command of commands) {
      if (command.type !== 'abort') continue;
      const doomed = command.activations.flatMap((id) => inFlight.get(id) ?? []);
      entries.push(...this.#trace.cancelled(doomed, now));
    }
    // The run stops here: attempts still in flight are recorded as cancelled in this commit.
    if (after.status !== 'running' && lastQueued) {
      const abandoned = after.pending.flatMap((a) => inFlight.get(a.id) ?? []);
      entries.push(...this.#trace.cancelled(abandoned, now));
    }
    return entries;
  }

  /** Turns the caller's signal into a cancellation; returns the undo. */
  #watchSignal(): () => void {
    const { signal } = this.#options;
    if (signal === undefined) return () => {};
    const onAbort = () => this.#stop({ type: 'cancelled', reason: reasonOf(signal.reason) });
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
    return () => signal.removeEventListener('abort', onAbort);
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
    this.#clock.sleep(Math.max(0, at - this.#clock.now()), stop.signal).then(() => {
      if (!stop.signal.aborted) this.#stop({ type: 'deadline' });
    });
  }

  #stop(event: RunEvent): void {
    this.#stopAsked = true;
    this.#inbox.push({ event });
  }

  #keepLease(): LeaseKeeper | undefined {
    const held = this.#options.lease;
    const store = this.#options.store;
    if (held === undefined || store === undefined) return undefined;
    return new LeaseKeeper(store, held.lease, held.leaseMs, systemClock, (why) => {
      // Another process may drive the run now: nothing this one still has in flight may land.
      this.#executor.stop(new Error('this process lost the run'));
      this.#inbox.push({ lost: why ?? 'the lease was taken over' });
    });
  }

  async #release(keeper: LeaseKeeper | undefined): Promise<void> {
    const held = this.#options.lease;
    const store: Store | undefined = this.#options.store;
    if (held === undefined || store === undefined) return;
    try {
      if (!this.#released) await store.release(keeper?.lease ?? held.lease);
    } catch {
      // The store may be why the run stopped; the lease then expires by itself.
    } finally {
      held.done();
    }
  }
}

function lostLease(runId: string, why: unknown): WaymarkError {
  if (isWaymarkError(why) && why.code === 'LEASE_LOST') return why;
  const message = `this process stopped driving run "${runId}": ${why instanceof Error ? why.message : String(why)}; another process may have taken it over`;
  return new WaymarkError('LEASE_LOST', message, {
    retryable: false,
    details: { runId },
    ...(why instanceof Error && { cause: why }),
  });
}

function reasonOf(reason: unknown): string {
  if (reason instanceof Error) return reason.message;
  return reason === undefined ? 'aborted' : String(reason);
}
