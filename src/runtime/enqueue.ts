import type { CompiledGraph } from '../graph/compiled.js';
import { startState } from '../graph/run-input.js';
import type { Store, WorkQueue } from '../store/store.js';
import { newRunId, systemClock } from './clock.js';
import { initialSnapshot } from './core/checkpoint.js';
import { deepFreeze } from './core/freeze.js';
import { Journal } from './journal.js';
import { checkOptions } from './run.js';
import { runLimits } from './run-limits.js';
import type { RunOptions } from './run-types.js';

/** Options of {@link enqueue}: those of a run that the workers who drive it keep. */
export type EnqueueOptions = Pick<
  RunOptions,
  | 'runId'
  | 'timeoutMs'
  | 'maxSteps'
  | 'labels'
  | 'model'
  | 'budget'
  | 'snapshotEvery'
  | 'clock'
  | 'pauseBefore'
  | 'pauseAfter'
  | 'telemetry'
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
  const parsed = { data: startState(graph as CompiledGraph, input) };
  checkOptions(options);
  const clock = options.clock ?? systemClock;
  const limits = runLimits(graph as CompiledGraph, options, clock);
  const g = graph as CompiledGraph;
  const runId = options.runId ?? newRunId();
  const snapshot = initialSnapshot(g, runId, deepFreeze(parsed.data), limits);
  // Traced, the run starts with a short segment of its own: the workers' task spans are its
  // children, and the run keeps its trace context from its first snapshot on.
  const segment = options.telemetry?.segment({
    runId,
    graph: { name: g.name, hash: g.hash, version: g.version },
    cause: 'enqueued',
    readBack: 0,
  });
  try {
    await Journal.create(
      store,
      g,
      snapshot,
      clock,
      options.snapshotEvery,
      options.labels,
      segment?.traceparent,
    );
    // An inbox item is what wakes an idle worker at once (a notification); without it the run
    // would wait for the next poll.
    await store.wake(runId, clock.now());
  } catch (error) {
    segment?.ended({ status: snapshot.status, steps: 0, thrown: error });
    throw error;
  }
  segment?.ended({ status: snapshot.status, steps: 0 });
  return runId;
}
