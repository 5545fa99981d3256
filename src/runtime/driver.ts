import type { EffectLedger } from '../effects/ledger.js';
import type { ErrorValue } from '../error/error-value.js';
import type { CompiledGraph } from '../graph/compiled.js';
import type { TurnRecord, Usage } from '../graph/types.js';
import { type Clock, systemClock } from './clock.js';
import { viewOf } from './core/fan-out.js';
import type { Activation, Outcome, RunEvent, Snapshot } from './core/snapshot.js';
import { step } from './core/step.js';
import { executeAttempt } from './execute.js';
import { inputHash } from './input-hash.js';
import type { Journal } from './journal.js';
import type { RunOptions, RunResult } from './run-types.js';
import { type Trace, type TraceEntry, traceOf } from './trace.js';
import { recordWait } from './waits.js';

/** What the shell needs: the caller's run options and where to record. */
export interface DriverOptions extends RunOptions {
  readonly journal?: Journal;
  /** Hash every activation's inputs into its completion event (runs with a store). */
  readonly hashInputs?: boolean;
  /** Recorded outputs by input hash (`node@version#digest`): these activations are read back, not run. */
  readonly reuse?: ReadonlyMap<string, unknown>;
  /** Where `ctx.effect` results are recorded: the run's store, or memory. */
  readonly ledger: EffectLedger;
}

/**
 * The effectful shell around `step`: executes the commands it returns, feeds results back as
 * events, keeps the trace, and turns signals and timers into events.
 */
export class Driver {
  readonly #graph: CompiledGraph;
  readonly #options: DriverOptions;
  readonly #clock: Clock;
  // Aborted when the run stops for any reason, so in-flight nodes stop waiting.
  readonly #stopped = new AbortController();
  readonly #inbox: RunEvent[] = [];
  #wake: (() => void) | undefined;
  readonly #started = new Map<string, { readonly at: number; readonly activation: Activation }>();
  readonly #branchSignals = new Map<string, AbortController>();
  readonly #cancelled = new Set<string>();
  readonly #reused = new Set<string>();
  readonly #turns = new Map<string, readonly TurnRecord[]>();
  readonly #entries: TraceEntry[] = [];
  #stopAsked = false;

  constructor(graph: CompiledGraph, options: DriverOptions) {
    this.#graph = graph;
    this.#options = options;
    this.#clock = options.clock ?? systemClock;
  }

  /** Feeds `first` (then whatever happens) through `step` until the run stops. */
  async drive(initial: Snapshot, first: readonly RunEvent[]): Promise<RunResult> {
    const cleanup = this.#watch();
    const queued = [...first];
    let snapshot = initial;
    let event = queued.shift()!;
    const journal = this.#options.journal;
    try {
      for (;;) {
        const traced = this.#entries.length;
        const result = step(this.#graph, snapshot, event);
        snapshot = result.snapshot;
        if (result.outcome !== undefined) this.#record(result.outcome, event);
        for (const command of result.commands) {
          if (command.type === 'abort') this.#abort(command.activations);
        }
        // The run stops here: attempts still in flight are recorded as cancelled in this commit.
        const stopping = snapshot.status !== 'running' && queued.length === 0;
        if (stopping) this.#recordAbandoned(snapshot);
        // Write-ahead: the step is durable before any node it schedules starts.
        if (journal !== undefined)
          await journal.record(event, snapshot, this.#entries.slice(traced));
        // Waits are recorded after the commit that opened them, before the process may exit.
        for (const command of result.commands) {
          if (command.type === 'wait') await this.#recordWait(command.activation, snapshot);
        }
        if (snapshot.status !== 'running') {
          // A stopped checkpoint may still have events lined up (migrated, then resumed).
          if (queued.length === 0) break;
          event = queued.shift()!;
          continue;
        }
        // A stop already asked for (a signal aborted before the start) wins over new work.
        if (!this.#stopAsked) {
          for (const command of result.commands) {
            if (command.type === 'execute')
              this.#launch(command.activation, command.delayMs, snapshot);
          }
        }
        event = queued.shift() ?? this.#inbox.shift() ?? (await this.#next());
      }
    } finally {
      cleanup();
      const reason = new Error('the run stopped');
      this.#stopped.abort(reason);
      for (const controller of this.#branchSignals.values()) controller.abort(reason);
    }
    return resultOf(snapshot, traceOf(this.#entries));
  }

  async #recordWait(activation: Activation, snapshot: Snapshot): Promise<void> {
    const store = this.#options.store;
    // Without a store nobody can answer; the run still stops `waiting`, which is the truth.
    if (store !== undefined)
      await recordWait(store, this.#graph, snapshot.runId, activation, this.#clock.now());
  }

  /** Turns the caller's signal and the run deadline into events; returns the undo. */
  #watch(): () => void {
    const { signal, timeoutMs } = this.#options;
    const onAbort = () => this.#push({ type: 'cancelled', reason: reasonOf(signal?.reason) });
    if (signal?.aborted) onAbort();
    else signal?.addEventListener('abort', onAbort, { once: true });
    const deadline =
      timeoutMs === undefined
        ? undefined
        : setTimeout(() => this.#push({ type: 'deadline', timeoutMs }), timeoutMs);
    return () => {
      signal?.removeEventListener('abort', onAbort);
      clearTimeout(deadline);
    };
  }

  #launch(activation: Activation, delayMs: number, snapshot: Snapshot): void {
    // A branch can be cancelled while the run goes on (a sibling won an `any` join), so it
    // gets a controller of its own, created only if the node reads ctx.signal.
    let signal: AbortSignal | (() => AbortSignal) = this.#stopped.signal;
    if (activation.branch !== undefined) signal = () => this.#branchSignal(activation.id);
    const view = viewOf(snapshot.state, snapshot.fanOuts, activation);
    const node = this.#graph.nodes.get(activation.node)!;
    // Only a durable run records input hashes: they are what a later run reuses outputs by.
    const hash = this.#options.hashInputs ? inputHash(node, view.state, view.item) : undefined;
    const reuse = this.#options.reuse;
    if (hash !== undefined && reuse?.has(hash)) {
      this.#reused.add(activation.id);
      const event: RunEvent = {
        type: 'completed',
        activation: activation.id,
        update: reuse.get(hash),
        inputHash: hash,
        reused: true,
      };
      queueMicrotask(() => this.#push(event));
      return;
    }
    const input = {
      runId: snapshot.runId,
      ...view,
      errors: snapshot.errors,
      ledger: this.#options.ledger,
      inputHash: hash,
      signal,
      spent: snapshot.spent,
      limits: snapshot.limits,
      turns: this.#turns,
    };
    const start = () => {
      const at = this.#clock.now();
      this.#started.set(activation.id, { at, activation });
      this.#options.onAttemptStart?.({
        node: activation.node,
        activation: activation.id,
        attempt: activation.attempt,
        startedAt: at,
      });
      return executeAttempt(node, activation, input);
    };
    const stopped = this.#stopped.signal;
    const attempt =
      delayMs > 0
        ? this.#clock
            .sleep(delayMs, stopped)
            .then(() =>
              stopped.aborted || this.#cancelled.has(activation.id) ? undefined : start(),
            )
        : start();
    attempt.then((event) => event && this.#push(event));
  }

  /** Stops activations the run no longer wants; whatever they return later is ignored. */
  #abort(ids: readonly string[]): void {
    for (const id of ids) {
      this.#cancelled.add(id);
      this.#branchSignals
        .get(id)
        ?.abort(new Error('cancelled: the join no longer needs this branch'));
      this.#branchSignals.delete(id);
      const started = this.#started.get(id);
      if (started === undefined) continue;
      this.#started.delete(id);
      this.#appendCancelled(started.activation, started.at);
    }
  }

  #branchSignal(id: string): AbortSignal {
    let controller = this.#branchSignals.get(id);
    if (controller === undefined) {
      controller = new AbortController();
      if (this.#stopped.signal.aborted || this.#cancelled.has(id))
        controller.abort(new Error('the run stopped'));
      else this.#branchSignals.set(id, controller);
    }
    return controller.signal;
  }

  #push(event: RunEvent): void {
    if (event.type === 'cancelled' || event.type === 'deadline') this.#stopAsked = true;
    this.#inbox.push(event);
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.();
  }

  #next(): Promise<RunEvent> {
    return new Promise((resolve) => {
      this.#wake = () => resolve(this.#inbox.shift()!);
    });
  }

  #record(outcome: Outcome, event: RunEvent): void {
    const { activation } = outcome;
    const startedAt = this.#started.get(activation.id)?.at ?? this.#clock.now();
    this.#started.delete(activation.id);
    // A finished activation's signal must not abort later, when its siblings are cancelled.
    this.#branchSignals.delete(activation.id);
    const reused = this.#reused.delete(activation.id);
    const turns = this.#turns.get(activation.id);
    if (turns !== undefined) this.#turns.delete(activation.id);
    const usage =
      (event.type === 'completed' || event.type === 'failed') && event.activation === activation.id
        ? event.usage
        : undefined;
    // Most steps report nothing besides their update: no extras object for them.
    const extra =
      reused || usage !== undefined || turns !== undefined ? { reused, usage, turns } : undefined;
    this.#appendEntry(
      activation,
      startedAt,
      outcome.status,
      outcome.retrying,
      outcome.error,
      extra,
    );
  }

  #append(entry: TraceEntry): void {
    this.#entries.push(entry);
    this.#options.onTraceEntry?.(entry);
  }

  /** Attempts still in flight when the run stopped: their results will be discarded. */
  #recordAbandoned(snapshot: Snapshot): void {
    for (const activation of snapshot.pending) {
      const started = this.#started.get(activation.id);
      if (started !== undefined) this.#appendCancelled(activation, started.at);
    }
  }

  #appendCancelled(activation: Activation, startedAt: number): void {
    this.#appendEntry(activation, startedAt, 'cancelled', false, undefined);
  }

  #appendEntry(
    activation: Activation,
    startedAt: number,
    status: TraceEntry['status'],
    retried: boolean,
    error: ErrorValue | undefined,
    extra?: {
      readonly reused: boolean;
      readonly usage: Usage | undefined;
      readonly turns: readonly TurnRecord[] | undefined;
    },
  ): void {
    const entry: { -readonly [K in keyof TraceEntry]: TraceEntry[K] } = {
      node: activation.node,
      activation: activation.id,
      parent: activation.parent,
      attempt: activation.attempt,
      startedAt,
      durationMs: this.#clock.now() - startedAt,
      status,
      retried,
    };
    if (extra !== undefined) {
      if (extra.reused) entry.reused = true;
      if (extra.usage !== undefined) entry.usage = extra.usage;
      if (extra.turns !== undefined) entry.turns = extra.turns;
    }
    this.#append(
      error === undefined
        ? entry
        : { ...entry, error: { code: error.code, class: error.class, message: error.message } },
    );
  }
}

/** The caller's view of a stopped snapshot. */
export function resultOf(snapshot: Snapshot, trace: Trace): RunResult {
  const base = {
    runId: snapshot.runId,
    state: snapshot.state,
    trace,
    errors: snapshot.errors,
    steps: snapshot.steps,
    spent: snapshot.spent,
    quarantine: snapshot.quarantine,
  };
  switch (snapshot.status) {
    case 'failed':
    case 'cancelled':
    case 'timed_out':
      return { ...base, status: snapshot.status, error: snapshot.error };
    case 'succeeded':
    case 'waiting':
      return { ...base, status: snapshot.status };
    case 'running':
      throw new Error('waymark internal: a run was reported while still running');
  }
}

function reasonOf(reason: unknown): string {
  if (reason instanceof Error) return reason.message;
  return reason === undefined ? 'aborted' : String(reason);
}
