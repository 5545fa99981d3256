import type { ErrorValue } from '../../error/error-value.js';
import type { CompiledGraph } from '../../graph/compiled.js';
import type { Spend } from '../../graph/types.js';
import { untrackedReset } from '../../graph/untracked.js';
import type { TaskRecord } from '../../store/store.js';
import { parse, stringify } from '../codec/values.js';
import { viewOf } from '../core/fan-out.js';
import type { Activation, RunLimits, Snapshot } from '../core/snapshot.js';
import { inputHash } from './input-hash.js';

/** What a worker needs to run one attempt of an activation, without loading its run. */
export interface TaskInput {
  readonly activation: Activation;
  /** The state the activation sees: its branch's or the run's, only its `reads` when declared. */
  readonly state: Readonly<Record<string, unknown>>;
  readonly item: unknown;
  readonly index: number | undefined;
  readonly errors: readonly ErrorValue[];
  readonly spent: Spend;
  readonly limits: RunLimits;
  readonly inputHash: string | undefined;
  /** The trace context the run held when the task was scheduled: its worker span's parent. */
  readonly traceparent?: string;
}

/**
 * The task a commit schedules for an activation: everything its attempt reads, taken from the
 * snapshot the commit writes, so any worker can run it from the task row alone.
 *
 * @example
 * const task = taskOf(graph, snapshot, activation);
 */
export function taskOf(
  graph: CompiledGraph,
  snapshot: Snapshot,
  activation: Activation,
  traceparent?: string,
): TaskRecord {
  return {
    runId: snapshot.runId,
    activation: activation.id,
    attempt: activation.attempt,
    node: activation.node,
    graph: graph.name,
    graphHash: graph.hash,
    notBefore: activation.notBefore ?? null,
    input: stringify(taskInputFor(graph, snapshot, activation, traceparent), graph),
  };
}

/**
 * What an attempt of `activation` reads, from `snapshot`: a task row's input, or what a worker
 * holding the run passes to the attempt it runs itself. A node that declares `reads` gets only
 * those fields: what it may read is all it gets, and all its task row holds.
 *
 * @example
 * const input = taskInputFor(graph, snapshot, activation);
 */
export function taskInputFor(
  graph: CompiledGraph,
  snapshot: Snapshot,
  activation: Activation,
  traceparent?: string,
): TaskInput {
  const node = graph.nodes.get(activation.node)!;
  const view = viewOf(snapshot.state, snapshot.fanOuts, activation, node);
  const reads = node.def.reads;
  // A worker's step sees untracked fields at their defaults, as a resume does: the task row is
  // in the store, so it holds those, never what a node wrote in this process.
  let state =
    graph.untracked === undefined ? view.state : untrackedReset(graph.untracked, view.state);
  if (reads !== undefined) {
    const picked: Record<string, unknown> = {};
    for (const field of reads) if (Object.hasOwn(state, field)) picked[field] = state[field];
    state = picked;
  }
  return {
    activation,
    state,
    item: view.item,
    index: view.index,
    errors: snapshot.errors,
    spent: snapshot.spent,
    limits: snapshot.limits,
    inputHash: inputHash(node, view.state, view.item, activation, snapshot.limits.context),
    ...(traceparent !== undefined && { traceparent }),
  };
}

/**
 * A task's input as stored, read back.
 *
 * @example
 * const { activation, state } = taskInputOf(task.input);
 */
export function taskInputOf(text: string): TaskInput {
  return parse(text) as TaskInput;
}
