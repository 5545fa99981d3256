import type { ErrorValue } from '../../error/error-value.js';
import type { NodeKind } from '../../graph/kinds.js';
import type { JoinSummary } from '../../graph/types.js';
import type { Activation, RunStatus } from '../core/snapshot.js';
import type { TraceEntry } from './trace.js';

/**
 * An observer of runs, told what the runtime records as it records it: the seam a tracer
 * (`otel()` from `waymark/otel`) plugs into. It depends on nothing, so the runtime pays for no
 * tracing library; without one (`RunOptions.telemetry` unset) every hook is one `if`.
 *
 * @example
 * import { otel } from 'waymark/otel';
 * await run(g, input, { store, telemetry: otel() });
 */
export interface Telemetry {
  /**
   * A process starts driving a run: a segment lasts until the drive stops (the run waits,
   * stops, or this process loses it). Undefined: this segment is not observed (no tracer is
   * registered), and the runtime tells it nothing more.
   */
  segment(start: SegmentStart): SegmentTelemetry | undefined;
  /**
   * A worker runs one attempt of a task it claimed (PostgreSQL): outside any segment of this
   * process, under the trace context the run stored when the task was scheduled. Undefined: not
   * observed.
   */
  task(start: TaskStart): TaskTelemetry | undefined;
}

/** What a worker's task starts from. */
export interface TaskStart {
  readonly runId: string;
  readonly graph: { readonly name: string; readonly hash: string; readonly version: number };
  readonly activation: Activation;
  readonly kind: NodeKind;
  /** The worker's id, as leases name it. */
  readonly worker: string;
  /** The trace context (W3C `traceparent`) the run held when the task was scheduled, if any. */
  readonly parent?: string | undefined;
}

/** One observed task of a worker; see {@link Telemetry.task}. */
export interface TaskTelemetry extends AttemptScope {
  /**
   * The attempt ended and its result went to the run's inbox, or did not (`recorded: false`:
   * the lease was lost). The run's orchestrator decides what follows: a worker knows no route.
   */
  ended(entry: TraceEntry, ended: AttemptEnded & { readonly recorded: boolean }): void;
}

/** What a segment starts from. */
export interface SegmentStart {
  readonly runId: string;
  readonly graph: { readonly name: string; readonly hash: string; readonly version: number };
  /** The first event of the drive: `started`, `resumed`, `answered`, `deadline`, `migrated`... */
  readonly cause: string;
  /** Activations the run completed before this segment: read back from its checkpoint. */
  readonly readBack: number;
  /** The trace context (W3C `traceparent`) the run's previous segment stored, if any. */
  readonly previous?: string | undefined;
}

/** One observed segment; see {@link Telemetry.segment}. */
export interface SegmentTelemetry {
  /**
   * This segment's trace context as a W3C `traceparent`, stored with the run's checkpoints so
   * the next segment can link to it; undefined to store none.
   */
  readonly traceparent: string | undefined;
  /**
   * An attempt of an activation starts in this process (after any backoff). The scope it
   * returns runs the node body, so what the body traces nests under the attempt.
   */
  attemptStarted(activation: Activation, kind: NodeKind): AttemptScope | undefined;
  /**
   * An attempt ended and its result was committed: its trace entry (a cancelled one included),
   * the nodes its router chose (when its node has one) and its update.
   */
  attemptEnded(entry: TraceEntry, ended: AttemptEnded): void;
  /** An activation was read back from an earlier run by its input hash: it did not run. */
  reused(entry: TraceEntry): void;
  waitOpened(wait: {
    readonly activation: string;
    readonly node: string;
    readonly requestId: string;
    readonly prompt: string;
  }): void;
  waitAnswered(wait: { readonly activation: string; readonly answer: unknown }): void;
  joinReleased(join: {
    readonly activation: string;
    readonly node: string;
    readonly join: JoinSummary;
  }): void;
  /**
   * A cap was hit (a visit cap, the step limit, a budget, the deadline): the error value it
   * recorded, whether an `onError` route handles it or it stops the run.
   */
  capHit(cap: ErrorValue): void;
  /** The drive stopped: how the run stands, or what the drive threw (a lost lease). */
  ended(end: SegmentEnd): void;
}

/** Runs a node body inside an attempt's scope. */
export interface AttemptScope {
  within<T>(body: () => T): T;
}

/** What an attempt's commit says besides its trace entry. */
export interface AttemptEnded {
  readonly kind: NodeKind;
  /** The nodes a router sent the run to (`__end__` for none); absent when the node has no router. */
  readonly route?: readonly string[];
  /** The fields the attempt set, as applied. */
  readonly update?: unknown;
}

/** How a segment ended. */
export interface SegmentEnd {
  readonly status: RunStatus;
  readonly steps: number;
  readonly error?: ErrorValue;
  /** What the drive threw (`LEASE_LOST`, a store failure), if it threw. */
  readonly thrown?: unknown;
}
