import { storeLedger } from '../effects/ledger.js';
import { errorValue } from '../error/error-value.js';
import type { CompiledGraph } from '../graph/compiled.js';
import type { ClaimedTask, Store, WorkQueue } from '../store/store.js';
import type { Clock } from './clock.js';
import { executeAttempt, failedAttempt } from './execute.js';
import { taskInputOf } from './task-input.js';
import type { Telemetry } from './telemetry.js';
import { attemptEntry } from './telemetry-step.js';
import { stringify } from './values.js';

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
  options: {
    readonly clock: Clock;
    readonly signal: AbortSignal;
    /** Where the result goes: a worker's task finisher; by default, a statement of its own. */
    readonly finish?: (task: ClaimedTask, attempt: string, at: number) => Promise<boolean>;
    /** Who is told of the attempt, with the id of the worker running it. */
    readonly telemetry?: { readonly telemetry: Telemetry; readonly worker: string };
  },
): Promise<boolean> {
  const { clock, signal } = options;
  const input = taskInputOf(task.input);
  const node = graph.nodes.get(task.node);
  const now = clock.now();
  const observed =
    options.telemetry === undefined || node === undefined
      ? undefined
      : options.telemetry.telemetry.task({
          runId: task.runId,
          graph: { name: graph.name, hash: graph.hash, version: graph.version },
          activation: input.activation,
          kind: node.def.kind,
          worker: options.telemetry.worker,
          parent: input.traceparent,
        });
  const body = (n: NonNullable<typeof node>) => () =>
    executeAttempt(graph, n, input.activation, {
      runId: task.runId,
      state: input.state,
      item: input.item,
      index: input.index,
      errors: input.errors,
      ledger: storeLedger(store, task.runId, () => clock.now()),
      inputHash: input.inputHash,
      signal,
      spent: input.spent,
      limits: input.limits,
      clock,
    });
  const attempt =
    node === undefined
      ? failedAttempt(
          input.activation,
          errorValue(
            { node: task.node, activation: task.activation, attempt: task.attempt },
            'GRAPH_MISMATCH',
            'permanent',
            `graph "${graph.name}" has no node "${task.node}"`,
          ),
          now,
          now,
        )
      : await (observed === undefined ? body(node)() : observed.within(body(node)));
  const result = stringify(attempt, graph);
  const recorded =
    options.finish !== undefined
      ? await options.finish(task, result, clock.now())
      : (await store.finishTasks([{ task, attempt: result, at: clock.now() }]))[0] === true;
  observed?.ended(attemptEntry(input.activation, attempt), { kind: node!.def.kind, recorded });
  return recorded;
}
