import { WaymarkError } from '../../error/waymark-error.js';
import type { CompiledGraph } from '../../graph/compiled.js';
import { keepsRates, RATE_HOLD_MS } from '../../store/rates.js';
import type { Lease } from '../../store/store.js';
import { type ExecutorOptions, LocalExecutor } from '../attempt/executor.js';
import { type Clock, systemClock } from '../clock.js';
import type { Activation, RunEvent, Snapshot } from '../core/snapshot.js';
import type { Due } from '../engine/book.js';
import { Drive } from '../engine/drive.js';
import type { Journal } from '../engine/journal.js';
import { LeaseKeeper } from '../engine/lease-keeper.js';
import { TraceRecorder } from '../engine/trace-recorder.js';
import type { RunOptions, RunResult } from '../run-types.js';
import { stepEvents } from '../watch/stream.js';
import type { SegmentTelemetry } from '../watch/telemetry.js';
import { tellStep } from '../watch/telemetry-step.js';
import { traceOf } from '../watch/trace.js';
import { resultOf } from './result.js';

/** How long a drained drive lets its bodies finish before it stops them, by default. */
export const defaultDrainGraceMs = 5_000;

/** How soon a sleep must be due for a drive in process to sleep through it, with a store. */
export const defaultHoldSleepsMs = 5_000;

/** What the in-process host drives a run with: the caller's options, and where it records. */
export interface InProcessOptions
  extends Pick<
      RunOptions,
      | 'signal'
      | 'drain'
      | 'drainGraceMs'
      | 'onTraceEntry'
      | 'onAttemptStart'
      | 'clock'
      | 'store'
      | 'watch'
      | 'watchStates'
      | 'telemetry'
      | 'holdSleepsMs'
    >,
    Omit<
      ExecutorOptions,
      'clock' | 'onAttemptStart' | 'onEphemeral' | 'onHeartbeat' | 'scope' | 'onDone'
    > {
  readonly journal?: Journal;
  /** The run's lease, held for this driver; renewed while it drives, released when it stops. */
  readonly lease?: {
    readonly lease: Lease;
    readonly leaseMs: number;
    /** When the claim that returned it was sent, by `monotonicMs()`. */
    readonly sentAt: number;
    readonly done: () => void;
  };
  /** The trace context the run's previous segment stored (a resume read it), for a span link. */
  readonly previousTrace?: string | undefined;
}

/**
 * Drives a run in this process, the in-process host of the one engine ({@link Drive}): every
 * activation runs here, on a {@link LocalExecutor}; its lease (with a store) is kept by a
 * {@link LeaseKeeper} with the same rules as a worker's; the caller's signal cancels the run,
 * its `drain` signal gives it back unfinished; the run's stream, telemetry and trace are told
 * what each commit recorded. Resolves when the run stops (waits, or ends).
 * @throws WaymarkError `LEASE_LOST` (another process took the run, or this one could not renew
 *   its lease in time), `RUN_DRAINED` (given back unfinished: resumable), `STORE_*`.
 *
 * @example
 * const result = await driveInProcess(graph, snapshot, [{ type: 'started' }], { ledger, hashInputs: false });
 */
export async function driveInProcess(
  graph: CompiledGraph,
  initial: Snapshot,
  first: readonly RunEvent[],
  options: InProcessOptions,
): Promise<RunResult> {
  const clock: Clock = options.clock ?? systemClock;
  const trace = new TraceRecorder(options.onTraceEntry);
  const { journal, watch, store, lease } = options;
  const runId = initial.runId;
  const states = { states: options.watchStates === true };
  const { untracked } = graph;
  // Without a journal the stream still counts commits, as a store would.
  let seq = journal?.seq ?? 0;
  const segment = startSegment(initial, first, options);
  const keeper =
    lease === undefined || store === undefined
      ? undefined
      : new LeaseKeeper(store, { leaseMs: lease.leaseMs });
  const drive = new Drive({
    graph,
    clock,
    snapshot: initial,
    trace,
    ...(journal !== undefined && { journal }),
    ...(store !== undefined && { store }),
    ...(lease !== undefined &&
      keeper !== undefined && { lease: { lease: lease.lease, sentAt: lease.sentAt, keeper } }),
    executor: (done) =>
      new LocalExecutor(
        graph,
        {
          clock,
          ledger: options.ledger,
          hashInputs: options.hashInputs,
          ...(store !== undefined && { memos: store }),
          ...(store !== undefined && keepsRates(store) && { rates: store }),
          ...(options.reuse !== undefined && { reuse: options.reuse }),
          ...(options.onAttemptStart !== undefined && { onAttemptStart: options.onAttemptStart }),
          ...(watch !== undefined && {
            onEphemeral: (activation: Activation, name: string, data: unknown, at: number) =>
              watch({
                ...told(runId, journal?.seq ?? seq, activation, at),
                type: 'delta',
                name,
                data,
              }),
            onHeartbeat: (activation: Activation, at: number, details: unknown) =>
              watch({
                ...told(runId, journal?.seq ?? seq, activation, at),
                type: 'heartbeat',
                ...(details !== undefined && { details }),
              }),
          }),
          ...(segment !== undefined && {
            scope: (activation, kind) => segment.attemptStarted(activation, kind),
          }),
        },
        done,
      ),
    keep: (book) => book.scheduled(),
    // Without a store nobody else could ever wake a sleep: this process sleeps through it.
    holdSleepsMs:
      options.holdSleepsMs ??
      (store === undefined ? Number.POSITIVE_INFINITY : defaultHoldSleepsMs),
    // A rate limit throttles, it does not stop: its deferral (a window's length at most) is
    // slept through here unless the caller set how long to hold sleeps.
    holdRateSleepsMs: options.holdSleepsMs ?? RATE_HOLD_MS,
    onCommitted: (s, committed, at) => {
      if (segment !== undefined) tellStep(segment, graph, s.before, s.event, s.result, s.trace);
      if (watch === undefined) return;
      seq = committed;
      const told = stepEvents(runId, committed, at, s.before, s.event, s.result, states, untracked);
      for (const event of told) watch(event);
    },
    ...(watch !== undefined && {
      onCaughtUp: (stored, before, caught, stepped) => {
        seq = stored.seq;
        for (const told of stepEvents(
          runId,
          stored.seq,
          stored.at,
          before,
          caught,
          stepped,
          states,
          untracked,
        ))
          watch(told);
      },
    }),
  });
  const unwatch = listen(drive, options);
  let snapshot = initial;
  let thrown: unknown;
  try {
    const end = await drive.run(first.map((event): Due => ({ event })));
    snapshot = end.snapshot;
    if (end.how === 'drained') throw drainedRun(runId);
    if (snapshot.status === 'running')
      throw new Error('waymark internal: a drive in process ended with its run still running');
    return resultOf(snapshot, traceOf(trace.entries), graph);
  } catch (error) {
    snapshot = drive.snapshot;
    thrown = error;
    throw error;
  } finally {
    unwatch();
    await keeper?.stop();
    lease?.done();
    segment?.ended({
      status: snapshot.status,
      steps: snapshot.steps,
      ...('error' in snapshot && { error: snapshot.error }),
      ...(thrown !== undefined && { thrown }),
    });
  }
}

/** Turns the caller's signals into a cancellation and a drain; returns the undo. */
function listen(drive: Drive, options: InProcessOptions): () => void {
  const { signal, drain } = options;
  const grace = options.drainGraceMs ?? defaultDrainGraceMs;
  const onAbort = () => drive.cancel(reasonOf(signal?.reason));
  const onDrain = () => drive.drain(grace);
  if (signal?.aborted === true) onAbort();
  else signal?.addEventListener('abort', onAbort, { once: true });
  if (drain?.aborted === true) onDrain();
  else drain?.addEventListener('abort', onDrain, { once: true });
  return () => {
    signal?.removeEventListener('abort', onAbort);
    drain?.removeEventListener('abort', onDrain);
  };
}

/** Starts this drive's segment with the caller's telemetry, if it observes this one. */
function startSegment(
  initial: Snapshot,
  first: readonly RunEvent[],
  options: InProcessOptions,
): SegmentTelemetry | undefined {
  const { telemetry, journal, previousTrace } = options;
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
  return segment;
}

/**
 * What an attempt tells live and nothing records: an `ephemeral: true` emit (`delta`) or a
 * heartbeat. `seq` alone is "after every event of commit seq": a watcher resuming after one of
 * these resumes after the last recorded event before it.
 */
function told(runId: string, seq: number, activation: Activation, at: number) {
  return {
    offset: String(seq),
    runId,
    seq,
    at,
    ephemeral: true as const,
    activation: activation.id,
    node: activation.node,
    attempt: activation.attempt,
  };
}

function drainedRun(runId: string): WaymarkError {
  return new WaymarkError(
    'RUN_DRAINED',
    `run "${runId}" was given back unfinished (drained): nothing failed, and it is resumable; resume it, or let a worker take it over`,
    { retryable: true, details: { runId } },
  );
}

function reasonOf(reason: unknown): string {
  if (reason instanceof Error) return reason.message;
  return reason === undefined ? 'aborted' : String(reason);
}
