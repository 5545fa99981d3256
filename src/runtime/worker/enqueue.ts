import { WaymarkError } from '../../error/waymark-error.js';
import type { CompiledGraph } from '../../graph/compiled.js';
import { startState } from '../../graph/run-input.js';
import type { NewRun, Store } from '../../store/store.js';
import type { WorkQueue } from '../../store/work-queue.js';
import { newRunId, systemClock } from '../clock.js';
import { initialSnapshot } from '../core/checkpoint.js';
import { deepFreeze } from '../core/freeze.js';
import type { Snapshot } from '../core/snapshot.js';
import { newRunOf } from '../engine/journal.js';
import { checkOptions } from '../local/run.js';
import { runLimits } from '../local/run-limits.js';
import type { RunOptions } from '../run-types.js';
import type { SegmentTelemetry } from '../watch/telemetry.js';

/** Options of {@link enqueue}: those of a run that the workers who drive it keep. */
export type EnqueueOptions = Pick<
  RunOptions,
  | 'runId'
  | 'timeoutMs'
  | 'maxSteps'
  | 'labels'
  | 'model'
  | 'budget'
  | 'maxTokens'
  | 'maxCostUsd'
  | 'snapshotEvery'
  | 'clock'
  | 'pauseBefore'
  | 'pauseAfter'
  | 'telemetry'
  | 'context'
>;

/**
 * Records a new run for the workers of a store that serves them, instead of running it in this
 * process: the run exists, started by none, and the first worker that has its graph folds its
 * start and schedules its entry. Returns the run's id at once; follow it with `inspect` (or
 * `waymark show`). An idle worker is woken at once: a store that notifies tells it.
 * @throws WaymarkError `INPUT_INVALID`, `OPTIONS_INVALID`, `RUN_EXISTS`.
 *
 * @example
 * const runId = await enqueue(store, triage, { issue: 'login fails' });
 */
export async function enqueue<S, I, O>(
  store: Store & WorkQueue,
  graph: CompiledGraph<S, I, O>,
  input: I,
  options: EnqueueOptions = {},
): Promise<string> {
  const [prepared] = prepare(graph as CompiledGraph, [input], options, [options.runId]);
  const { run } = prepared!;
  await recorded([prepared!], async () => {
    // With its wake-up, in one statement: an inbox item is what wakes an idle worker at once (a
    // notification); without it the run would wait for the next poll.
    await store.createRuns([run], { wake: true });
  });
  return run.id;
}

/** Options of {@link enqueueAll}: those of {@link enqueue}, with an id per run if given. */
export type EnqueueAllOptions = Omit<EnqueueOptions, 'runId'> & {
  /** The runs' ids, one per input, in order; generated where absent. */
  readonly runIds?: readonly string[];
};

/**
 * Records many new runs for the workers in one statement, all or none: a batch of documents to
 * triage, a backfill. Every input is checked before anything is recorded; one wake-up tells the
 * idle workers. Returns the runs' ids in the order of `inputs`.
 * @throws WaymarkError `INPUT_INVALID` (naming the input's position), `OPTIONS_INVALID`,
 *   `RUN_EXISTS` (nothing recorded).
 *
 * @example
 * const ids = await enqueueAll(store, triage, issues.map((issue) => ({ issue })));
 */
export async function enqueueAll<S, I, O>(
  store: Store & WorkQueue,
  graph: CompiledGraph<S, I, O>,
  inputs: readonly I[],
  options: EnqueueAllOptions = {},
): Promise<string[]> {
  const { runIds } = options;
  if (runIds !== undefined && runIds.length !== inputs.length) {
    throw new WaymarkError(
      'OPTIONS_INVALID',
      `runIds has ${runIds.length} ids for ${inputs.length} inputs: give one per input, or none`,
      { retryable: false },
    );
  }
  const prepared = prepare(graph as CompiledGraph, inputs, options, runIds ?? []);
  if (prepared.length === 0) return [];
  await recorded(prepared, async () => {
    // One wake-up is enough: a run never started is claimable without an inbox item of its own.
    await store.createRuns(
      prepared.map((p) => p.run),
      { wake: true },
    );
  });
  return prepared.map((p) => p.run.id);
}

interface Prepared {
  readonly run: NewRun;
  readonly segment: SegmentTelemetry | undefined;
  readonly status: Snapshot['status'];
}

/** The rows of new runs, each input checked first: nothing is recorded if one is refused. */
function prepare(
  g: CompiledGraph,
  inputs: readonly unknown[],
  options: Omit<EnqueueOptions, 'runId'>,
  runIds: readonly (string | undefined)[],
): Prepared[] {
  checkOptions(options);
  const clock = options.clock ?? systemClock;
  const who = (i: number) =>
    inputs.length === 1 ? `"${g.name}"` : `input ${i} of the ${inputs.length} for "${g.name}"`;
  const states = inputs.map((input, i) => startState(g, input, who(i)));
  return states.map((state, i) => {
    const limits = runLimits(g, options, clock);
    const runId = runIds[i] ?? newRunId();
    const snapshot = initialSnapshot(g, runId, deepFreeze(state), limits);
    // Traced, the run starts with a short segment of its own: the workers' task spans are its
    // children, and the run keeps its trace context from its first snapshot on.
    const segment = options.telemetry?.segment({
      runId,
      graph: { name: g.name, hash: g.hash, version: g.version },
      cause: 'enqueued',
      readBack: 0,
    });
    return {
      run: newRunOf(g, snapshot, clock, options.labels, segment?.traceparent),
      segment,
      status: snapshot.status,
    };
  });
}

/** Records the runs with `write`, ending each one's segment as it went. */
async function recorded(prepared: readonly Prepared[], write: () => Promise<void>): Promise<void> {
  try {
    await write();
  } catch (error) {
    for (const p of prepared) p.segment?.ended({ status: p.status, steps: 0, thrown: error });
    throw error;
  }
  for (const p of prepared) p.segment?.ended({ status: p.status, steps: 0 });
}
