import { WaymarkError } from '../../error/waymark-error.js';
import type { CompiledGraph } from '../../graph/compiled.js';
import { allowedInput } from '../../graph/run-input.js';
import type { Store } from '../../store/store.js';
import { currentSnapshot } from '../codec/current.js';
import { loadStored } from '../codec/load-stored.js';
import { run } from '../local/run.js';
import type { RunOptions, RunResult } from '../run-types.js';
import { applyFields } from './apply-fields.js';
import { labelsOf, previousLabel, threadLabel } from './labels.js';

/** Options of {@link continueThread}: a run's, but its store is the one given. */
export type ContinueOptions = Omit<RunOptions, 'store' | 'reuseFrom'>;

/**
 * Continues a finished run's thread (a conversation): a new run of the same graph that starts
 * from the earlier run's final state with `input` applied through the field reducers (a chat's
 * `messages: append` gets the new message added, not the history replaced). The new run is
 * labelled with its thread (the id of the thread's first run) and the run it continues; the
 * earlier run is left as it was. `listRuns({ labels: { thread } })` lists the thread's later
 * runs; its first run is the one whose id is the thread's.
 * @throws WaymarkError `RUN_NOT_FOUND`, `GRAPH_MISMATCH`, `RUN_NOT_CONTINUABLE` (the run has
 *   not succeeded: a thread continues from an answer that was given), `OPTIONS_INVALID` (an
 *   input that is not state fields), and what `run()` throws.
 *
 * @example
 * const second = await continueThread(store, chat, first.runId, { messages: [question] });
 */
export async function continueThread<S, I>(
  store: Store,
  graph: CompiledGraph<S, I>,
  runId: string,
  input: Readonly<Record<string, unknown>>,
  options: ContinueOptions = {},
): Promise<RunResult<S>> {
  const g = graph as CompiledGraph;
  const loaded = await loadStored(store, runId);
  const before = currentSnapshot(g, loaded);
  if (before.status !== 'succeeded') {
    throw new WaymarkError(
      'RUN_NOT_CONTINUABLE',
      `run "${runId}" is ${before.status}: a thread continues from a run that succeeded`,
      { retryable: false, details: { runId, status: before.status } },
    );
  }
  const earlier = labelsOf(loaded.run);
  // The next input is a caller's: held to the input schema. The state it is applied to is the
  // graph's own, private fields included, so the next run starts from it unrestricted.
  allowedInput(g, input, `the thread of "${g.name}"`);
  const state = applyFields(g, before.state, input, "the thread's next input");
  const { input: _schema, ...unrestricted } = g;
  const from = g.input === undefined ? graph : (unrestricted as unknown as typeof graph);
  // The thread's context goes on with it unless the next run is given its own.
  const context = options.context ?? before.limits.context;
  return run(from, state as unknown as I, {
    ...options,
    ...(context !== undefined && { context }),
    store,
    labels: {
      ...earlier,
      ...options.labels,
      [threadLabel]: earlier[threadLabel] ?? runId,
      [previousLabel]: runId,
    },
  }) as Promise<RunResult<S>>;
}
