import { storeLedger } from '../../effects/ledger.js';
import { errorValue } from '../../error/error-value.js';
import type { CompiledGraph } from '../../graph/compiled.js';
import { keepsRates } from '../../store/rates.js';
import type { ClaimedTask, Store } from '../../store/store.js';
import type { WorkQueue } from '../../store/work-queue.js';
import { cachedAttempt, cacheKeyOf, remember } from '../attempt/cache.js';
import { type Attempt, executeAttempt, failedAttempt } from '../attempt/execute.js';
import { admitAttempt, callAdmitter, settleAttempt } from '../attempt/rate-admission.js';
import { type TaskInput, taskInputOf } from '../attempt/task-input.js';
import type { Clock } from '../clock.js';
import { recordedAttempt } from '../codec/untracked.js';
import { stringify } from '../codec/values.js';
import type { Telemetry } from '../watch/telemetry.js';
import { attemptEntry } from '../watch/telemetry-step.js';

/** How a worker runs an attempt: its clock, the signal that stops it, who is told of it. */
export interface AttemptOptions {
  readonly clock: Clock;
  readonly signal: AbortSignal;
  /** Who is told of the attempt, with the id of the worker running it. */
  readonly telemetry?: { readonly telemetry: Telemetry; readonly worker: string };
}

/**
 * Runs one claimed task: one attempt of one activation, from the input its task row carries, and
 * puts the attempt in its run's inbox, fenced by the task's lease. Never throws for what the
 * node does (that is the attempt's failure); false when the lease was lost meanwhile (the task
 * was cancelled, or another worker took it over), in which case nothing was recorded.
 *
 * @example
 * const recorded = await runTask(store, graph, task, { clock, signal });
 */
export async function runTask(
  store: Store & WorkQueue,
  graph: CompiledGraph,
  task: ClaimedTask,
  options: AttemptOptions & {
    /**
     * Where the result goes: a worker's task finisher; by default, a statement of its own.
     * `ended` is the attempt `attempt` is the stored text of.
     */
    readonly finish?: (
      task: ClaimedTask,
      attempt: string,
      at: number,
      ended: Attempt,
    ) => Promise<boolean>;
  },
): Promise<boolean> {
  const { clock } = options;
  let ended: ((recorded: boolean) => void) | undefined;
  const attempt = await attemptOf(store, graph, task.runId, task.node, taskInputOf(task.input), {
    ...options,
    onEnd: (end) => {
      ended = end;
    },
  });
  const result = stringify(recordedAttempt(graph, attempt), graph);
  const recorded =
    options.finish !== undefined
      ? await options.finish(task, result, clock.now(), attempt)
      : (await store.finishTasks([{ task, attempt: result, at: clock.now() }]))[0] === true;
  ended?.(recorded);
  return recorded;
}

/**
 * Runs one attempt of the activation `input` is for, on a worker: a task's, or that of a run the
 * worker holds. Never rejects: a node the graph lacks is a permanent failure. `onEnd` gets the
 * function that tells the attempt's telemetry whether its result was recorded.
 *
 * @example
 * const attempt = await attemptOf(store, graph, runId, 'draft', input, { clock, signal });
 */
export async function attemptOf(
  store: Store,
  graph: CompiledGraph,
  runId: string,
  nodeName: string,
  input: TaskInput,
  options: AttemptOptions & { readonly onEnd?: (ended: (recorded: boolean) => void) => void },
): Promise<Attempt> {
  const { clock, signal } = options;
  const { activation } = input;
  const node = graph.nodes.get(nodeName);
  const now = clock.now();
  if (node === undefined) {
    return failedAttempt(
      activation,
      errorValue(
        { node: nodeName, activation: activation.id, attempt: activation.attempt },
        'GRAPH_MISMATCH',
        'permanent',
        `graph "${graph.name}" has no node "${nodeName}"`,
      ),
      now,
      now,
    );
  }
  // A cached node looks in the store first: a hit is its attempt, nothing runs.
  const key = cacheKeyOf(node, input.state, input.inputHash);
  if (key !== undefined) {
    const hit = await cachedAttempt(store, graph, node, activation, key, clock.now());
    if (hit !== undefined) return hit;
  }
  // A rate-limited node is admitted by the store first: a refusal is its attempt, unstarted.
  const rates = node.def.rateLimit !== undefined && keepsRates(store) ? store : undefined;
  const refused = rates && (await admitAttempt(rates, node, activation, runId, clock));
  if (refused !== undefined) return refused;
  const observed = options.telemetry?.telemetry.task({
    runId,
    graph: { name: graph.name, hash: graph.hash, version: graph.version },
    activation,
    kind: node.def.kind,
    worker: options.telemetry.worker,
    parent: input.traceparent,
  });
  const body = () =>
    executeAttempt(graph, node, activation, {
      runId,
      state: input.state,
      item: input.item,
      index: input.index,
      errors: input.errors,
      ledger: storeLedger(store, runId, () => clock.now()),
      inputHash: input.inputHash,
      signal,
      spent: input.spent,
      limits: input.limits,
      clock,
      ...(rates !== undefined && {
        admitCall: callAdmitter(rates, node, activation, runId, clock),
      }),
    });
  const attempt = observed === undefined ? await body() : await observed.within(body);
  if (rates !== undefined) await settleAttempt(rates, node, activation, runId, attempt);
  if (key !== undefined) await remember(store, graph, node, key, attempt, runId);
  if (observed !== undefined)
    options.onEnd?.((recorded) =>
      observed.ended(attemptEntry(activation, attempt), { kind: node.def.kind, recorded }),
    );
  return attempt;
}
