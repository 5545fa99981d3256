import { memoryLedger, storeLedger } from '../../effects/ledger.js';
import { WaymarkError } from '../../error/waymark-error.js';
import type { CompiledGraph } from '../../graph/compiled.js';
import { maxTimerMs } from '../../graph/limits.js';
import { startState } from '../../graph/run-input.js';
import { MemoryStore } from '../../store/memory-store.js';
import { newRunId, systemClock } from '../clock.js';
import { initialSnapshot } from '../core/checkpoint.js';
import { deepFreeze } from '../core/freeze.js';
import { Journal } from '../engine/journal.js';
import { defaultLeaseMs, holdRun } from '../engine/ownership.js';
import type { RunOptions, RunResult } from '../run-types.js';
import { driveInProcess } from './in-process.js';
import { drainedWhileQueued, queuedFor, untilAdmitted } from './queued.js';
import { reuseIndex } from './reuse.js';
import { runLimits } from './run-limits.js';

/** Default run-level step limit: generous for real graphs, small enough to stop a runaway fast. */

/**
 * Runs a compiled graph in this process until it finishes, fails, is cancelled or times out.
 * Node failures never reject the promise: they are values in the result.
 * @throws WaymarkError `INPUT_INVALID` when `input` does not match the state schema (or the
 * graph's `input` schema), `INPUT_NOT_ALLOWED` when it sets a field outside the `input` schema.
 *
 * @example
 * const result = await run(g, { claim: 'water boils at 100 C' });
 * if (result.status === 'failed') console.error(result.error.code, result.error.message);
 */
export async function run<S, I, O = S>(
  graph: CompiledGraph<S, I, O>,
  input: I,
  options: RunOptions = {},
): Promise<RunResult<S, O>> {
  const parsed = { data: startState(graph as CompiledGraph, input) };
  checkOptions(options);
  const clock = options.clock ?? systemClock;
  const limits = runLimits(graph as CompiledGraph, options, clock);
  const g = graph as CompiledGraph;
  const runId = options.runId ?? newRunId();
  const snapshot = initialSnapshot(g, runId, deepFreeze(parsed.data), limits);
  const { store } = options;
  if (store === undefined) {
    return driveInProcess(g, snapshot, [{ type: 'started' }], {
      ...options,
      // Memory with no store to keep it in: items for this run only.
      ledger: memoryLedger(new MemoryStore({ now: () => clock.now() })),
      hashInputs: false,
    }) as Promise<RunResult<S, O>>;
  }
  const reuse =
    options.reuseFrom === undefined ? undefined : await reuseIndex(store, options.reuseFrom);
  const journal = await Journal.create(
    store,
    g,
    snapshot,
    clock,
    options.snapshotEvery,
    options.labels,
    undefined,
    options.reuseFrom === undefined ? undefined : [options.reuseFrom],
  );
  // Queued behind its key's limit: it starts here once it is handed a slot.
  const queued = await queuedFor(store, g, runId);
  if (queued !== undefined) {
    const { key, concurrency } = queued;
    options.onQueued?.({ runId, key, concurrency });
    if (!(await untilAdmitted(store, g, runId, clock, options.signal, options.drain)))
      throw drainedWhileQueued(runId);
  }
  // Nobody else knows the run yet; the lease makes this process its one owner from the start.
  const held = await holdRun(store, runId, options.leaseMs ?? defaultLeaseMs);
  journal.epoch = held.lease.epoch;
  return driveInProcess(g, snapshot, [{ type: 'started' }], {
    ...options,
    journal,
    ledger: storeLedger(store, runId, () => clock.now()),
    hashInputs: true,
    lease: held,
    ...(reuse && { reuse }),
  }) as Promise<RunResult<S, O>>;
}

/** Rejects run options a run cannot honour, before anything is recorded. */
export function checkOptions(
  options: Omit<RunOptions, 'runId'>,
  stored = options.store !== undefined,
): void {
  const { timeoutMs, maxSteps } = options;
  const bad = (name: string, value: unknown, rule: string) => {
    throw new WaymarkError(
      'OPTIONS_INVALID',
      `run option ${name} = ${JSON.stringify(value)}: ${rule}`,
      {
        retryable: false,
      },
    );
  };
  if (timeoutMs !== undefined && !(timeoutMs > 0 && timeoutMs <= maxTimerMs)) {
    bad('timeoutMs', timeoutMs, `must be > 0 and at most ${maxTimerMs} (about 24.8 days)`);
  }
  if (maxSteps !== undefined && !(Number.isInteger(maxSteps) && maxSteps > 0)) {
    bad('maxSteps', maxSteps, 'must be a whole number >= 1');
  }
  if (options.drain !== undefined && !stored) {
    bad('drain', 'a signal', 'needs a store: a drained run is left in its store, resumable');
  }
  const grace = options.drainGraceMs;
  if (grace !== undefined && !(Number.isInteger(grace) && grace >= 0 && grace <= maxTimerMs)) {
    bad('drainGraceMs', grace, `must be a whole number of ms from 0 to ${maxTimerMs}`);
  }
  if (options.reuseFrom !== undefined && options.store === undefined) {
    bad('reuseFrom', options.reuseFrom, 'needs a store: outputs are reused from a stored run');
  }
  const { labels } = options;
  if (
    labels !== undefined &&
    (typeof labels !== 'object' ||
      labels === null ||
      Array.isArray(labels) ||
      Object.values(labels).some((v) => typeof v !== 'string'))
  ) {
    bad('labels', labels, 'must be an object whose values are strings');
  }
  if (options.model !== undefined && !/^[\w.-]+:.+$/.test(options.model)) {
    bad('model', options.model, 'must name a model as provider:model-id, e.g. openai:gpt-4o-mini');
  }
  for (const key of ['maxTokens', 'maxCostUsd'] as const) {
    const value = options[key];
    if (value !== undefined && !(typeof value === 'number' && value > 0))
      bad(key, value, 'must be a number > 0');
  }
  const budget = options.budget;
  if (budget !== undefined) {
    for (const key of ['maxTokens', 'maxCostUsd'] as const) {
      const value = budget[key];
      if (value !== undefined && !(typeof value === 'number' && value > 0)) {
        bad(`budget.${key}`, value, 'must be a number > 0');
      }
    }
  }
  const every = options.snapshotEvery;
  if (every !== undefined && !(Number.isInteger(every) && every > 0)) {
    bad('snapshotEvery', every, 'must be a whole number >= 1');
  }
  const hold = options.holdSleepsMs;
  if (hold !== undefined && !(typeof hold === 'number' && hold >= 0)) {
    bad('holdSleepsMs', hold, 'must be a number of ms >= 0 (Infinity: sleep through every sleep)');
  }
  const { leaseMs } = options;
  if (
    leaseMs !== undefined &&
    !(Number.isInteger(leaseMs) && leaseMs >= 10 && leaseMs <= maxTimerMs)
  ) {
    bad('leaseMs', leaseMs, `must be a whole number of ms from 10 to ${maxTimerMs}`);
  }
}
