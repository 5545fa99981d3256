import type { EffectLedger } from '../../effects/ledger.js';
import type { CompiledGraph, RuntimeNode } from '../../graph/compiled.js';
import type { RateStore } from '../../store/rates.js';
import type { MemoStore } from '../../store/store.js';
import type { Clock } from '../clock.js';
import { parseUpdate, refusalError } from '../core/apply-update.js';
import { viewOf } from '../core/fan-out.js';
import type { Activation, Snapshot } from '../core/snapshot.js';
import type { AttemptStart } from '../run-types.js';
import type { AttemptScope } from '../watch/telemetry.js';
import { cachedAttempt, cacheKeyOf, remember, reusedAttempt } from './cache.js';
import { type Attempt, executeAttempt, failedAttempt } from './execute.js';
import { inputHash } from './input-hash.js';
import { admitAttempt, callAdmitter, settleAttempt } from './rate-admission.js';

/** What a {@link LocalExecutor} needs besides the graph. */
export interface ExecutorOptions {
  readonly clock: Clock;
  /** Where `ctx.effect` results are recorded: the run's store, or memory. */
  readonly ledger: EffectLedger;
  /** Hash every activation's inputs into its completion event (runs with a store). */
  readonly hashInputs: boolean;
  /**
   * Recorded outputs by input hash (`node@version#digest`): these activations are read back, not
   * run. `parsed` says whether the output was recorded as parsed (store format 3) or raw.
   */
  readonly reuse?: ReadonlyMap<string, { readonly update: unknown; readonly parsed: boolean }>;
  readonly onAttemptStart?: (attempt: AttemptStart) => void;
  /** Told of what an attempt emits with `ephemeral: true`; without it those are dropped. */
  readonly onEphemeral?: (activation: Activation, name: string, data: unknown, at: number) => void;
  /** Told of an attempt's heartbeats as they happen (at most one a second); else not told. */
  readonly onHeartbeat?: (activation: Activation, at: number, details: unknown) => void;
  /**
   * The scope an attempt's body runs in, as it starts (after any backoff): a telemetry span, so
   * what the body traces nests under it. Undefined: none.
   */
  readonly scope?: (
    activation: Activation,
    kind: RuntimeNode['def']['kind'],
  ) => AttemptScope | undefined;
  /** Told once an activation given to `execute` is done here: ended, aborted or stopped. */
  readonly onDone?: (activation: Activation) => void;
  /** Where cached nodes find and keep their outputs (the run's store); absent: no cache. */
  readonly memos?: MemoStore;
  /** Where rate-limited nodes are admitted (the run's store); absent: their limits go uncounted. */
  readonly rates?: RateStore;
}

/**
 * What the engine hands the activations a run keeps to: it runs each one's attempt and reports
 * it, stops what the run no longer wants, and says what it is still doing.
 */
export interface Executor {
  /** Runs one attempt of `activation` against the state `snapshot` gives it. */
  execute(activation: Activation, snapshot: Snapshot): void;
  /** Stops activations the run no longer wants; whatever they return later is ignored. */
  abort(ids: readonly string[]): void;
  /** Stops everything; nothing is reported after it. */
  stop(reason: Error): void;
  /** Attempts started and not yet ended, by activation id. */
  readonly inFlight: ReadonlyMap<
    string,
    { readonly activation: Activation; readonly startedAt: number }
  >;
  /** Activations given to `execute` and not yet reported, aborted or stopped (backoffs included). */
  readonly active: ReadonlySet<string>;
}

/**
 * Runs node bodies in this process, the executor half of the orchestrator/executor split: it
 * takes an activation the orchestrator committed, waits out its `notBefore`, runs one attempt,
 * and hands the attempt back. It holds no run state beyond what is in flight; a queue of workers
 * on other machines plays the same part for the PostgreSQL store.
 */
export class LocalExecutor implements Executor {
  readonly #graph: CompiledGraph;
  readonly #options: ExecutorOptions;
  readonly #done: (attempt: Attempt) => void;
  // Aborted when the run stops for any reason, so in-flight nodes stop waiting.
  readonly #stopped = new AbortController();
  // Read on every attempt's end: the getter of a controller's signal is not free.
  readonly #stoppedSignal = this.#stopped.signal;
  readonly #branchSignals = new Map<string, AbortController>();
  readonly #cancelled = new Set<string>();
  readonly #inFlight = new Map<
    string,
    { readonly activation: Activation; readonly startedAt: number }
  >();
  readonly #active = new Set<string>();

  constructor(graph: CompiledGraph, options: ExecutorOptions, done: (attempt: Attempt) => void) {
    this.#graph = graph;
    this.#options = options;
    this.#done = done;
  }

  /** Attempts started and not yet ended, by activation id. */
  get inFlight(): ReadonlyMap<
    string,
    { readonly activation: Activation; readonly startedAt: number }
  > {
    return this.#inFlight;
  }

  /** Activations given to `execute` and not yet reported, aborted or stopped. */
  get active(): ReadonlySet<string> {
    return this.#active;
  }

  /** Runs one attempt of `activation` against the state `snapshot` gives it. */
  execute(activation: Activation, snapshot: Snapshot): void {
    const { clock } = this.#options;
    // A branch can be cancelled while the run goes on (a sibling won an `any` join), so it
    // gets a controller of its own, created only if the node reads ctx.signal.
    let signal: AbortSignal | (() => AbortSignal) = this.#stoppedSignal;
    if (activation.branch !== undefined) signal = () => this.#branchSignal(activation.id);
    const node = this.#graph.nodes.get(activation.node)!;
    const view = viewOf(snapshot.state, snapshot.fanOuts, activation, node);
    // Only a durable run records input hashes: they are what a later run reuses outputs by.
    const hash = this.#options.hashInputs
      ? inputHash(node, view.state, view.item, activation, snapshot.limits.context)
      : undefined;
    const recorded = hash === undefined ? undefined : this.#options.reuse?.get(hash);
    this.#active.add(activation.id);
    if (recorded !== undefined) {
      queueMicrotask(() => {
        if (!this.#ended(activation)) this.#done(this.#reused(activation, hash!, recorded));
      });
      return;
    }
    // Fields written out, not spread: this object is made on every step.
    const input = {
      runId: snapshot.runId,
      state: view.state,
      item: view.item,
      index: view.index,
      errors: snapshot.errors,
      ledger: this.#options.ledger,
      inputHash: hash,
      signal,
      spent: snapshot.spent,
      limits: snapshot.limits,
      clock,
      ...(this.#options.onEphemeral !== undefined && {
        live: this.#live(activation, this.#options.onEphemeral),
      }),
      ...(this.#options.onHeartbeat !== undefined && {
        liveBeat: this.#liveBeat(activation, this.#options.onHeartbeat),
      }),
    };
    const { memos, rates } = this.#options;
    const limited = rates !== undefined && node.def.rateLimit !== undefined;
    // Copied for a rate-limited node only: this object is made on every step.
    const attemptInput = !limited
      ? input
      : { ...input, admitCall: callAdmitter(rates, node, activation, snapshot.runId, clock) };
    const start = () => {
      const startedAt = clock.now();
      this.#inFlight.set(activation.id, { activation, startedAt });
      this.#options.onAttemptStart?.({
        node: activation.node,
        activation: activation.id,
        attempt: activation.attempt,
        startedAt,
      });
      const scope = this.#options.scope?.(activation, node.def.kind);
      if (scope === undefined)
        return executeAttempt(this.#graph, node, activation, attemptInput, startedAt);
      return scope.within(() =>
        executeAttempt(this.#graph, node, activation, attemptInput, startedAt),
      );
    };
    const stopped = this.#stoppedSignal;
    const wait = activation.notBefore === undefined ? 0 : activation.notBefore - clock.now();
    const key = memos === undefined ? undefined : cacheKeyOf(node, view.state, hash);
    // A rate-limited node is admitted by the store first: a refusal is its attempt, unstarted.
    const admitted = !limited
      ? start
      : async () => {
          const refused = await admitAttempt(rates, node, activation, snapshot.runId, clock);
          if (refused !== undefined) return refused;
          const ended = await start();
          await settleAttempt(rates, node, activation, snapshot.runId, ended);
          return ended;
        };
    // A cached node looks in the store first: a hit is its attempt, nothing runs.
    const run =
      key === undefined
        ? admitted
        : async () =>
            (await cachedAttempt(memos!, this.#graph, node, activation, key, clock.now())) ??
            admitted();
    const attempt =
      wait > 0 || key !== undefined || limited
        ? clock
            .sleep(wait, stopped)
            .then(() => (stopped.aborted || this.#cancelled.has(activation.id) ? undefined : run()))
        : start();
    attempt.then((a) => {
      if (a === undefined) {
        this.#ended(activation);
        return;
      }
      if (key !== undefined) void remember(memos!, this.#graph, node, key, a, snapshot.runId);
      this.#inFlight.delete(activation.id);
      // A finished activation's signal must not abort later, when its siblings are cancelled.
      if (this.#branchSignals.size > 0) this.#branchSignals.delete(activation.id);
      if (!this.#ended(activation)) this.#done(a);
    });
  }

  /** Marks an activation done here; true if what it returns is to be ignored (stopped, cancelled). */
  #ended(activation: Activation): boolean {
    const { onDone } = this.#options;
    if (this.#active.delete(activation.id) && onDone !== undefined) onDone(activation);
    if (this.#stoppedSignal.aborted) return true;
    return this.#cancelled.size > 0 && this.#cancelled.has(activation.id);
  }

  /** The sink of one attempt's ephemeral emits: dropped once the attempt is cancelled. */
  #live(
    activation: Activation,
    tell: NonNullable<ExecutorOptions['onEphemeral']>,
  ): (name: string, data: unknown, at: number) => void {
    return (name, data, at) => {
      if (this.#stopped.signal.aborted || this.#cancelled.has(activation.id)) return;
      tell(activation, name, data, at);
    };
  }

  /** The sink of one attempt's heartbeats: quiet once the attempt is cancelled. */
  #liveBeat(
    activation: Activation,
    tell: NonNullable<ExecutorOptions['onHeartbeat']>,
  ): (at: number, details: unknown) => void {
    return (at, details) => {
      if (this.#stopped.signal.aborted || this.#cancelled.has(activation.id)) return;
      tell(activation, at, details);
    };
  }

  /** Stops activations the run no longer wants; whatever they return later is ignored. */
  abort(ids: readonly string[]): void {
    for (const id of ids) {
      this.#cancelled.add(id);
      this.#branchSignals
        .get(id)
        ?.abort(new Error('cancelled: the join no longer needs this branch'));
      this.#branchSignals.delete(id);
      this.#inFlight.delete(id);
    }
  }

  /** Stops everything: the run stopped, or this process lost the run. */
  stop(reason: Error): void {
    if (this.#stopped.signal.aborted) return;
    this.#stopped.abort(reason);
    for (const controller of this.#branchSignals.values()) controller.abort(reason);
  }

  /** A recorded output read back instead of running the node: a completion like any other. */
  #reused(
    activation: Activation,
    hash: string,
    recorded: { readonly update: unknown; readonly parsed: boolean },
  ): Attempt {
    const now = this.#options.clock.now();
    let update = recorded.update;
    // Outputs recorded before store format 3 are raw returns: parsed as the node's would be.
    if (!recorded.parsed) {
      const node = this.#graph.nodes.get(activation.node)!;
      const parsed = parseUpdate(this.#graph, node, update);
      if (!parsed.ok) {
        const where = {
          node: activation.node,
          activation: activation.id,
          attempt: activation.attempt,
        };
        return failedAttempt(activation, refusalError(where, parsed), now, now);
      }
      update = parsed.fields;
    }
    return reusedAttempt(activation, update, hash, now);
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
}
