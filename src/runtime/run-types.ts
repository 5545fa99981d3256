import type { ErrorValue } from '../error/error-value.js';
import type { Budget, Spend } from '../graph/types.js';
import type { Store } from '../store/store.js';
import type { Clock } from './clock.js';
import type { QuarantineEntry } from './core/snapshot.js';
import type { StreamEvent } from './watch/stream.js';
import type { Telemetry } from './watch/telemetry.js';
import type { Trace, TraceEntry } from './watch/trace.js';

/** An attempt that has just started, as {@link RunOptions.onAttemptStart} sees it. */
export interface AttemptStart {
  readonly node: string;
  readonly activation: string;
  readonly attempt: number;
  /** Milliseconds since the epoch, from the run's clock. */
  readonly startedAt: number;
}

/** Options of {@link run}. */
export interface RunOptions {
  /** The run's id; a fresh UUID when absent. */
  readonly runId?: string;
  /** Aborting it cancels the run: status `cancelled`, in-flight nodes see their signal abort. */
  readonly signal?: AbortSignal;
  /**
   * Aborting it gives the run back unfinished instead (a "drain", e.g. on SIGTERM): nothing new
   * starts, nodes running now may finish within `drainGraceMs` and their results are recorded,
   * the rest are stopped without recording anything, and the run is left `running` with its
   * lease released, for `resume` or a worker to continue. The promise then rejects with
   * `RUN_DRAINED`. With a store only: a run in memory has nowhere to be left.
   */
  readonly drain?: AbortSignal;
  /** With `drain`: how long nodes running may take to finish before they are stopped. Default 5,000. */
  readonly drainGraceMs?: number;
  /**
   * Time limit for the whole run: its deadline (start + this) is kept with the run, across
   * resumes; passing it ends the run `timed_out`.
   */
  readonly timeoutMs?: number;
  /** Most activations the run may complete. Default 10,000. */
  readonly maxSteps?: number;
  /**
   * Breakpoints (LangGraph's `interruptBefore`): before an activation of one of these nodes
   * starts, the run waits; `resume` runs it. Kept with the run, like `maxSteps`.
   */
  readonly pauseBefore?: readonly string[];
  /**
   * Breakpoints (LangGraph's `interruptAfter`): once an activation of one of these nodes
   * completes, what its completion admits waits; `resume` runs it. Kept with the run.
   */
  readonly pauseAfter?: readonly string[];
  readonly clock?: Clock;
  /**
   * Called as an attempt starts (after any retry backoff): live progress for a CLI. Reused
   * activations do not start. Must not throw.
   */
  readonly onAttemptStart?: (attempt: AttemptStart) => void;
  /** Called as each attempt ends, in order: live progress for a CLI or a log. Must not throw. */
  readonly onTraceEntry?: (entry: TraceEntry) => void;
  /**
   * Called with each event of the run's stream as its commit lands, in order: the events
   * `watch(store, graph, runId)` reads back from the store, the same offsets included. Must not
   * throw. See docs/streaming.md.
   */
  readonly watch?: (event: StreamEvent) => void;
  /** With `watch`: completion events carry the run's state after them. */
  readonly watchStates?: boolean;
  /**
   * Who is told of this drive of the run, e.g. `otel()` from `waymark/otel` for OpenTelemetry
   * spans. Not kept with the run: pass it again to `resume`. See docs/telemetry.md.
   */
  readonly telemetry?: Telemetry;
  /** Where the run is checkpointed as it goes; without one the run lives in memory only. */
  readonly store?: Store;
  /**
   * With a store: an earlier run whose recorded outputs stand in for every activation with the
   * same node, node version and input hash; only the rest run (an appended node, a changed one).
   */
  readonly reuseFrom?: string;
  /**
   * With a store: string labels recorded on the run (`RunRecord.labels`, as JSON), e.g. what
   * started it. The CLI records the graph file here so `resume <run-id>` can find it again.
   */
  readonly labels?: Readonly<Record<string, string>>;
  /**
   * The model every model node uses, as `provider:model-id` (the CLI's `--model`); without it
   * each model node uses its own. Kept with the run, so a resume uses the same model.
   */
  readonly model?: string;
  /**
   * The run's context (`ctx.context`; LangGraph.js: `context`), parsed by the graph's `context`
   * schema: kept with the run, so a resume or a worker gives every node the same.
   */
  readonly context?: unknown;
  /** What model nodes may spend in the whole run; kept with the run, like `maxSteps`. */
  readonly budget?: Budget;
  /**
   * Most tokens (input + output) the run may spend, promised before it starts: a graph whose
   * worst case (`boundOf`, docs/cost.md) is above it, or has no bound, is refused with
   * `BOUND_OVER_BUDGET` before anything runs; the run then keeps it as its budget too.
   */
  readonly maxTokens?: number;
  /** Most cost (US dollars) the run may spend, promised before it starts, like `maxTokens`. */
  readonly maxCostUsd?: number;
  /** With a store: write a full snapshot every this many events (and whenever the run stops). Default 100. */
  readonly snapshotEvery?: number;
  /**
   * With a store: how long this process's hold on the run (its lease) lasts unless renewed; it is
   * renewed every third of this while the run is driven. Another process may take the run over
   * once it expires by the store's clock, or at once when this process is gone. Default 30,000.
   */
  readonly leaseMs?: number;
  /**
   * A run left waiting only on sleeps, one due within this many ms, is slept through in this
   * process, on its clock, holding the run; a later sleep returns `waiting` for whoever hosts
   * the run to wake (a worker, `waymark serve`, a `resume()` once it is due). Default 5,000
   * with a store; without one every sleep is slept through (nothing else could wake it). An
   * attempt deferred by its node's `rateLimit` is slept through up to a minute by default.
   */
  readonly holdSleepsMs?: number;
  /**
   * Told when the run, with a store, is created queued behind its graph's concurrency limit
   * (`limits`): `run()` then waits, looking on its clock, until the run is handed a slot, and
   * only then starts it. A `drain` while it waits gives it back queued (`RUN_DRAINED`).
   */
  readonly onQueued?: (queued: {
    readonly runId: string;
    readonly key: string;
    readonly concurrency: number;
  }) => void;
}

interface ResultBase<S, O> {
  readonly runId: string;
  /** The state when the run stopped, deeply frozen. */
  readonly state: S;
  /** The fields of the graph's `output` schema, from `state`; the state itself when it has none. */
  readonly output: O;
  readonly trace: Trace;
  /** Every error value recorded, including those a route handled. */
  readonly errors: readonly ErrorValue[];
  /** Completed activations. */
  readonly steps: number;
  /** Model tokens and cost the run has spent, over its whole life. */
  readonly spent: Spend;
  /** Outputs checks set aside instead of letting them into state, oldest first. */
  readonly quarantine: readonly QuarantineEntry[];
}

/**
 * How a run ended. `failed`, `cancelled` and `timed_out` carry the error that ended it; a
 * `succeeded` run may still list handled errors in `errors`.
 */
export type RunResult<S = Record<string, unknown>, O = S> =
  | (ResultBase<S, O> & { readonly status: 'succeeded' })
  | (ResultBase<S, O> & {
      readonly status: 'waiting';
      /** When its first sleep is due (ms since the epoch), if it sleeps: a host wakes it then. */
      readonly wakesAt?: number;
    })
  | (ResultBase<S, O> & {
      readonly status: 'failed' | 'cancelled' | 'timed_out';
      readonly error: ErrorValue;
    });
