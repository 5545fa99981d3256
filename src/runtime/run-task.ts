import { storeLedger } from '../effects/ledger.js';
import { errorValue } from '../error/error-value.js';
import type { CompiledGraph } from '../graph/compiled.js';
import type { ClaimedTask, Store, WorkQueue } from '../store/store.js';
import type { Clock } from './clock.js';
import { executeAttempt, failedAttempt } from './execute.js';
import { taskInputOf } from './task-input.js';
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
  },
): Promise<boolean> {
  const { clock, signal } = options;
  const input = taskInputOf(task.input);
  const node = graph.nodes.get(task.node);
  const now = clock.now();
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
      : await executeAttempt(graph, node, input.activation, {
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
  const result = stringify(attempt, graph);
  if (options.finish !== undefined) return options.finish(task, result, clock.now());
  const [held] = await store.finishTasks([{ task, attempt: result, at: clock.now() }]);
  return held === true;
}
