import { storeLedger } from '../../effects/ledger.js';
import { WaymarkError } from '../../error/waymark-error.js';
import type { CompiledGraph } from '../../graph/compiled.js';
import type { LoadedRun, Store } from '../../store/store.js';
import { systemClock } from '../clock.js';
import { currentSnapshot } from '../codec/current.js';
import { loadStored } from '../codec/load-stored.js';
import { nextWake } from '../core/sleeping.js';
import type { RunEvent, Snapshot } from '../core/snapshot.js';
import { Journal } from '../engine/journal.js';
import { defaultLeaseMs, type HeldRun, holdRun } from '../engine/ownership.js';
import { patiently } from '../engine/patiently.js';
import { resumeEvents } from '../engine/waits.js';
import { migrationEvent } from '../ops/migrate.js';
import { checkMoveTarget } from '../ops/move-target.js';
import { ranBefore } from '../ops/ran-before.js';
import { resumability } from '../ops/resumability.js';
import type { RunOptions, RunResult } from '../run-types.js';
import { traceOf } from '../watch/trace.js';
import { storedTraceparent } from '../watch/trace-context.js';
import { defaultHoldSleepsMs, driveInProcess } from './in-process.js';
import { queuedFor, runQueued } from './queued.js';
import { resultOf } from './result.js';
import { checkOptions } from './run.js';

/**
 * Options of {@link resume}: those of a run, except what was fixed when it started (its id,
 * store, model, budget and labels). `timeoutMs` gives the run a new deadline from now (the one
 * it started with is kept otherwise); `maxSteps` raises its step limit.
 */
export type ResumeOptions = Omit<
  RunOptions,
  'runId' | 'store' | 'reuseFrom' | 'model' | 'budget' | 'labels'
> & {
  /**
   * Moves the run to this node before it continues (LangGraph's `Command({ goto })` from
   * outside): its pending activations (the failed one, an open wait) are dropped, recorded as
   * one `moved` event, and the node runs on the state as it stands. A node of the graph's own
   * path: not a join, nor one reached only inside a fan-out's branches or a subgraph.
   */
  readonly goto?: string;
};

/**
 * Continues a stored run that failed, timed out, waits for a person (its answers recorded with
 * `answer()` are applied; a wait past its timeout becomes a timeout error), or was interrupted
 * mid-flight (its process died while it was `running`). Completed activations are read back,
 * never run again; only the pending ones run, and a decision that stopped the run (a visit cap,
 * a router, a join) is taken again under the graph given. A run that already succeeded is
 * returned as it is. The run is driven by one process at a time: a run whose owner is alive
 * is refused, one whose owner is provably dead is taken over at once, and one whose owner
 * cannot be checked (another host) once its lease expires. The result's trace holds what this
 * call ran; the whole history is {@link loadTrace}.
 * With `goto`, the run is moved to that node first (see {@link ResumeOptions.goto}).
 * @throws WaymarkError `RUN_NOT_FOUND`, `RUN_OWNED`, `GOTO_INVALID`, `RUN_NOT_RESUMABLE` (cancelled, nothing
 *   left to run, or past its deadline without a new `timeoutMs`), `GRAPH_MISMATCH`,
 *   `STATE_VERSION_UNKNOWN`, `MIGRATION_FAILED`, `STORE_CORRUPT`, `STORE_VERSION_UNSUPPORTED`;
 *   none of them changes anything stored. `LEASE_LOST` if another process takes the run over
 *   while this one drives it.
 *
 * @example
 * const first = await run(g, input, { store });       // failed at step 5
 * const second = await resume(store, g, first.runId);  // runs step 5 on, reads 1-4 back
 */
export async function resume<S, I, O = S>(
  store: Store,
  graph: CompiledGraph<S, I, O>,
  runId: string,
  options: ResumeOptions = {},
): Promise<RunResult<S, O>> {
  checkOptions(options, true);
  const g = graph as CompiledGraph;
  // The run is loaded once this process owns it: nobody can move it between the load and the
  // first commit.
  const held = await holdRun(store, runId, options.leaseMs ?? defaultLeaseMs);
  let plan: Plan;
  try {
    plan = await planResume(store, g, runId, options);
  } catch (error) {
    await letGo(store, held);
    throw error;
  }
  const clock = options.clock ?? systemClock;
  // A sleep due soon is slept through here (the drive holds the run); a later one is left.
  const wake = nextWake(plan.snapshot);
  const hold = options.holdSleepsMs ?? defaultHoldSleepsMs;
  if (plan.events.length === 0 && (wake === undefined || wake - clock.now() > hold)) {
    await letGo(store, held);
    return resultOf(plan.snapshot, traceOf([]), g) as RunResult<S, O>;
  }
  const journal = new Journal(store, g, runId, plan.seq, clock, {
    epoch: held.lease.epoch,
    ...(options.snapshotEvery !== undefined && { every: options.snapshotEvery }),
  });
  return driveInProcess(g, plan.snapshot, plan.events, {
    ...options,
    store,
    journal,
    ledger: storeLedger(store, runId, () => clock.now()),
    hashInputs: true,
    lease: held,
    previousTrace: plan.traceparent,
  }) as Promise<RunResult<S, O>>;
}

/** What a resume will do: the run as it stands, and the events that continue it (none: nothing). */
interface Plan {
  readonly snapshot: Snapshot;
  readonly seq: number;
  readonly events: readonly RunEvent[];
  /** The trace context the segment before stored with the run, for the next one to link to. */
  readonly traceparent?: string | undefined;
}

async function planResume(
  store: Store,
  graph: CompiledGraph,
  runId: string,
  options: ResumeOptions,
): Promise<Plan> {
  const loaded = await patiently(() => loadStored(store, runId));
  const plan = await planLoaded(store, graph, runId, loaded, options);
  return { ...plan, traceparent: storedTraceparent(loaded.snapshot.data) };
}

async function planLoaded(
  store: Store,
  graph: CompiledGraph,
  runId: string,
  loaded: LoadedRun,
  options: ResumeOptions,
): Promise<Plan> {
  const snapshot = currentSnapshot(graph, loaded);
  const seq = loaded.run.seq;
  const now = (options.clock ?? systemClock).now();
  // A new time limit makes a run past its deadline resumable again.
  const verdict = resumability(snapshot, seq, options.timeoutMs === undefined ? now : -Infinity);
  // A run with nothing left to run can still be moved on to a node.
  const { goto } = options;
  if (goto !== undefined && (verdict.resumable || verdict.reason === 'nothing-left'))
    return planGoto(
      graph,
      snapshot,
      seq,
      now,
      { ...options, goto },
      await ranBefore(store, graph, runId),
    );
  if (!verdict.resumable) {
    if (verdict.reason === 'succeeded' && options.goto !== undefined)
      throw refuse('RUN_NOT_RESUMABLE', `run "${runId}" succeeded: it is not moved again`);
    if (verdict.reason === 'succeeded') return { snapshot, seq, events: [] };
    const why =
      verdict.reason === 'nothing-left' && 'error' in snapshot
        ? `: ${snapshot.error.code} ${snapshot.error.message}`
        : '';
    const message =
      verdict.reason === 'nothing-left'
        ? `run "${runId}" has nothing left to run${why}`
        : `run "${runId}" ${verdict.why.replace(/^it /, '')}`;
    throw refuse('RUN_NOT_RESUMABLE', message);
  }
  // Created, but its process died before the start was recorded: start it now.
  const neverStarted = seq === 0 && snapshot.status === 'running';
  if (neverStarted) {
    const queued = await queuedFor(store, graph, runId);
    if (queued !== undefined) throw runQueued(queued);
  }
  checkNodesExist(graph, snapshot);
  // Checked before anything else is decided, waiting runs included: an answer recorded for a
  // state the graph cannot read would never be applied.
  const migrated =
    snapshot.graph.stateVersion < graph.stateVersion ? migrationEvent(graph, snapshot) : undefined;
  const owed = await resumeEvents(store, graph, snapshot, now);
  const pastDeadline = owed[0]?.type === 'deadline';
  const first: RunEvent[] = migrated === undefined ? [] : [migrated];
  if (options.timeoutMs !== undefined) {
    // A new time limit from now replaces the deadline the run started with.
    const renewed: RunEvent = {
      type: 'resumed',
      deadlineAt: now + options.timeoutMs,
      timeoutMs: options.timeoutMs,
      ...(options.maxSteps !== undefined && { maxSteps: options.maxSteps }),
    };
    return {
      snapshot,
      seq,
      events: [...first, renewed, ...owed.filter((e) => e.type !== 'deadline')],
    };
  }
  // A run that was interrupted or waiting when its time ran out times out now (one that stopped
  // on its own past its deadline was refused above: it needs a new time limit).
  if (pastDeadline) return { snapshot, seq, events: [...first, { type: 'deadline' }] };
  const raise = options.maxSteps === undefined ? {} : { maxSteps: options.maxSteps };
  if (snapshot.status === 'waiting') {
    // A breakpoint waits for a resume, which is this: its activations run (after any answer).
    const paused = snapshot.pending.some((a) => a.paused === true);
    // Still waiting for a person, and nothing to change: nothing to do, and nothing is written.
    if (owed.length === 0 && migrated === undefined && options.maxSteps === undefined && !paused)
      return { snapshot, seq, events: [] };
    // Continued under a changed graph (an answer given after an edit): the resume restamps the
    // checkpoint, so that what the run goes under now is what it says.
    const edited = snapshot.graph.hash !== graph.hash || snapshot.graph.version !== graph.version;
    const resumed: RunEvent[] =
      options.maxSteps === undefined && !paused && !edited ? [] : [{ type: 'resumed', ...raise }];
    return { snapshot, seq, events: [...first, ...resumed, ...owed] };
  }
  const start: RunEvent = neverStarted ? { type: 'started' } : { type: 'resumed', ...raise };
  return { snapshot, seq, events: [...first, start, ...owed] };
}

/** A resume with `goto`: one `moved` event, refused (nothing recorded) for a node it cannot be at. */
function planGoto(
  graph: CompiledGraph,
  snapshot: Snapshot,
  seq: number,
  now: number,
  options: ResumeOptions & { readonly goto: string },
  ran: Readonly<Record<string, number>>,
): Plan {
  const to = checkMoveTarget(graph, snapshot, options.goto, 'goto');
  const deadline = snapshot.limits.deadlineAt;
  if (options.timeoutMs === undefined && deadline !== undefined && now >= deadline) {
    throw refuse(
      'RUN_NOT_RESUMABLE',
      `run "${snapshot.runId}" is past its deadline (${new Date(deadline).toISOString()}); move it with a new time limit (timeoutMs)`,
    );
  }
  const migrated =
    snapshot.graph.stateVersion < graph.stateVersion ? migrationEvent(graph, snapshot) : undefined;
  const moved: RunEvent = {
    type: 'moved',
    to,
    dropped: snapshot.pending.map((a) => a.id),
    ...(Object.keys(ran).length > 0 && { ran }),
    ...(options.timeoutMs !== undefined && {
      deadlineAt: now + options.timeoutMs,
      timeoutMs: options.timeoutMs,
    }),
    ...(options.maxSteps !== undefined && { maxSteps: options.maxSteps }),
  };
  return { snapshot, seq, events: migrated === undefined ? [moved] : [migrated, moved] };
}

/** Every node a pending activation or an open fan-out needs must still be in the graph. */
function checkNodesExist(graph: CompiledGraph, snapshot: Snapshot): void {
  const needed = new Set(snapshot.pending.map((a) => a.node));
  for (const fanOut of Object.values(snapshot.fanOuts)) {
    needed.add(fanOut.join);
    for (const entry of fanOut.entries) needed.add(entry);
  }
  const missing = [...needed].filter((name) => !graph.nodes.has(name));
  if (missing.length > 0) {
    throw refuse(
      'GRAPH_MISMATCH',
      `run "${snapshot.runId}" is waiting on node(s) ${missing.map((m) => `"${m}"`).join(', ')}, which graph "${graph.name}" no longer has`,
    );
  }
}

async function letGo(store: Store, held: HeldRun): Promise<void> {
  try {
    await store.release(held.lease);
  } catch {
    // Released or not, the lease expires by itself.
  } finally {
    held.done();
  }
}

function refuse(code: 'RUN_NOT_FOUND' | 'RUN_NOT_RESUMABLE' | 'GRAPH_MISMATCH', message: string) {
  return new WaymarkError(code, message, { retryable: false });
}
