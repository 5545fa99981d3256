import { storeLedger } from '../effects/ledger.js';
import { WaymarkError } from '../error/waymark-error.js';
import type { CompiledGraph } from '../graph/compiled.js';
import type { Store } from '../store/store.js';
import { systemClock } from './clock.js';
import type { RunEvent, Snapshot } from './core/snapshot.js';
import { currentSnapshot } from './current.js';
import { Driver, resultOf } from './driver.js';
import { Journal } from './journal.js';
import { checkOptions } from './run.js';
import type { RunOptions, RunResult } from './run-types.js';
import { traceOf } from './trace.js';
import { waitEvents } from './waits.js';

/** Options of {@link resume}: those of a run, except what was fixed when it started. */
// The run's model, budget and labels were fixed when it started, like maxSteps: a resume keeps them.
export type ResumeOptions = Omit<
  RunOptions,
  'runId' | 'store' | 'maxSteps' | 'reuseFrom' | 'model' | 'budget' | 'labels'
>;

/**
 * Continues a stored run that failed, timed out, waits for a person (its answers recorded with
 * `answer()` are applied; a wait past its timeout becomes a timeout error), or was interrupted
 * mid-flight (its process died while it was `running`). Completed activations are read back, never run again; only the
 * pending ones run. A run that already succeeded is returned as it is. The cost does not grow
 * with the run's history: the result's trace holds what this call ran; the whole history is
 * {@link loadTrace}.
 * @throws WaymarkError `RUN_NOT_FOUND`, `RUN_NOT_RESUMABLE` (cancelled, or nothing left to run),
 *   `GRAPH_MISMATCH`, `STATE_VERSION_UNKNOWN`, `MIGRATION_FAILED`, `STORE_CORRUPT`,
 *   `STORE_VERSION_UNSUPPORTED`; none of them
 *   changes anything stored.
 *
 * @example
 * const first = await run(g, input, { store });       // failed at step 5
 * const second = await resume(store, g, first.runId);  // runs step 5 on, reads 1-4 back
 */
export async function resume<S, I>(
  store: Store,
  graph: CompiledGraph<S, I>,
  runId: string,
  options: ResumeOptions = {},
): Promise<RunResult<S>> {
  checkOptions(options);
  const g = graph as CompiledGraph;
  const loaded = await store.loadRun(runId);
  if (loaded === undefined) throw refuse('RUN_NOT_FOUND', `there is no run "${runId}"`);
  const { run } = loaded;
  const snapshot = currentSnapshot(g, loaded);
  const stamp = snapshot.graph;

  if (snapshot.status === 'succeeded') return resultOf(snapshot, traceOf([])) as RunResult<S>;
  if (snapshot.status === 'cancelled')
    throw refuse(
      'RUN_NOT_RESUMABLE',
      `run "${runId}" was cancelled; a cancelled run stays cancelled`,
    );
  // Created, but its process died before the start was recorded: start it now.
  const neverStarted = run.seq === 0 && snapshot.status === 'running';
  if (snapshot.pending.length === 0 && !neverStarted) {
    const why = 'error' in snapshot ? `: ${snapshot.error.code} ${snapshot.error.message}` : '';
    throw refuse('RUN_NOT_RESUMABLE', `run "${runId}" has nothing left to run${why}`);
  }
  checkNodesExist(g, snapshot);
  const clock = options.clock ?? systemClock;
  const answers = await waitEvents(store, g, snapshot, clock.now());
  // Still waiting for a person: nothing to do, and nothing is written.
  if (snapshot.status === 'waiting' && answers.length === 0) {
    return resultOf(snapshot, traceOf([])) as RunResult<S>;
  }
  const first: RunEvent[] = [];
  if (stamp.stateVersion < g.stateVersion) first.push(migrate(g, snapshot));
  if (snapshot.status !== 'waiting')
    first.push(neverStarted ? { type: 'started' } : { type: 'resumed' });
  first.push(...answers);

  const journal = new Journal(store, runId, run.seq, clock);
  const ledger = storeLedger(store, runId, () => clock.now());
  const driver = new Driver(g, { ...options, store, journal, ledger, hashInputs: true });
  return driver.drive(snapshot, first) as Promise<RunResult<S>>;
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

/** Runs the declared migrations from the checkpoint's state version up to the graph's. */
function migrate(graph: CompiledGraph, snapshot: Snapshot): RunEvent {
  const from = snapshot.graph.stateVersion;
  if (Object.keys(snapshot.fanOuts).length > 0) {
    throw refuse(
      'RUN_NOT_RESUMABLE',
      `run "${snapshot.runId}" has branches in flight; its state cannot be migrated from v${from} until they join`,
    );
  }
  let state: Record<string, unknown> = structuredClone(snapshot.state) as Record<string, unknown>;
  for (let version = from; version < graph.stateVersion; version++) {
    const step = graph.migrations.get(version);
    if (step === undefined) {
      throw refuse(
        'STATE_VERSION_UNKNOWN',
        `graph "${graph.name}" declares no migration from state version ${version}`,
      );
    }
    try {
      state = step(state);
    } catch (cause) {
      throw refuse(
        'MIGRATION_FAILED',
        `the migration from state version ${version} threw: ${cause instanceof Error ? cause.message : String(cause)}`,
      );
    }
  }
  const parsed = graph.schema.safeParse(state);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw refuse(
      'MIGRATION_FAILED',
      `the migrated state does not match state version ${graph.stateVersion}: ${issue?.path.join('.')}: ${issue?.message}`,
    );
  }
  return { type: 'migrated', from, to: graph.stateVersion, state: parsed.data };
}

function refuse(
  code:
    | 'RUN_NOT_FOUND'
    | 'RUN_NOT_RESUMABLE'
    | 'GRAPH_MISMATCH'
    | 'STATE_VERSION_UNKNOWN'
    | 'MIGRATION_FAILED',
  message: string,
) {
  return new WaymarkError(code, message, { retryable: false });
}
