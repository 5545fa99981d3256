import { z } from 'zod';
import { WaymarkError } from '../../error/waymark-error.js';
import type { CompiledGraph } from '../../graph/compiled.js';
import type { Store, WaitRecord } from '../../store/store.js';
import { type Clock, systemClock } from '../clock.js';
import { currentSnapshot } from '../codec/current.js';
import { answerUpdate } from '../core/answer-update.js';
import type { Snapshot } from '../core/snapshot.js';
import { dueAt, type WaitRequest } from '../engine/waits.js';
import { checkMigrations } from './migrate.js';
import { schemaMismatch } from './schema-mismatch.js';

/** Options of {@link answer}. */
export interface AnswerOptions {
  /** Who answered: recorded with the answer. */
  readonly by: string;
  /**
   * The run's graph: the answer is then checked against the node's own zod schema (with its
   * refinements and defaults). Without it, against the JSON Schema stored with the wait.
   */
  readonly graph?: CompiledGraph<never, never> | CompiledGraph;
  readonly clock?: Clock;
}

/**
 * Records a person's answer to an open wait, once. The run does not move until it is resumed:
 * `resume(store, graph, runId)` applies the answer as the node's update and continues.
 * @throws WaymarkError `RUN_NOT_FOUND`, `RUN_NOT_RESUMABLE` (the run was cancelled),
 *   `WAIT_NOT_FOUND`, `WAIT_CLOSED` (nothing will apply an answer: its branch was cancelled),
 *   `WAIT_EXPIRED` (its `timeoutMs` passed before this answer, whether or not a host closed it),
 *   `ANSWER_INVALID` (with the schema's issues), `WAIT_ALREADY_ANSWERED`, and with `graph`:
 *   `GRAPH_MISMATCH`, `STATE_VERSION_UNKNOWN` (the graph could not continue the run),
 *   `UPDATE_INVALID` / `WRITE_DENIED` / `NODE_FAILED` (the answer's update could not be
 *   applied: a field that is not a state field, an `update` that throws); each records nothing.
 *
 * @example
 * await answer(store, runId, requestId, { approved: false, note: 'the pricing line is wrong' }, { by: 'editor@example.com' });
 * await resume(store, graph, runId);
 */
export async function answer(
  store: Store,
  runId: string,
  requestId: string,
  value: unknown,
  options: AnswerOptions,
): Promise<WaitRecord> {
  const record = await store.getRun(runId);
  if (record === undefined) {
    throw new WaymarkError('RUN_NOT_FOUND', `there is no run "${runId}"`, { retryable: false });
  }
  // A cancelled run never moves again: an answer to it would be recorded and never applied.
  if (record.status === 'cancelled') {
    throw new WaymarkError(
      'RUN_NOT_RESUMABLE',
      `run "${runId}" was cancelled; its waits can no longer be answered`,
      { retryable: false },
    );
  }
  const wait = (await store.listWaits(runId)).find((w) => w.requestId === requestId);
  if (wait === undefined) {
    throw new WaymarkError('WAIT_NOT_FOUND', `run "${runId}" has no wait "${requestId}"`, {
      retryable: false,
    });
  }
  const clock = options.clock ?? systemClock;
  await refuseExpired(store, wait, clock.now());
  if (wait.answer === null && wait.closedAt) {
    throw new WaymarkError(
      'WAIT_CLOSED',
      `wait "${requestId}" of run "${runId}" was closed unanswered: nothing will apply an answer to it (its branch or its run was cancelled)`,
      { retryable: false, details: { runId, requestId } },
    );
  }
  if (wait.answer !== null) {
    throw new WaymarkError(
      'WAIT_ALREADY_ANSWERED',
      `wait "${requestId}" was answered by ${wait.answeredBy} already`,
      {
        retryable: false,
      },
    );
  }
  const graph = options.graph as CompiledGraph | undefined;
  // An answer is recorded only if this graph can apply it: the run's state must be one the
  // graph reads (or migrates), not discovered by the resume after the answer.
  const snapshot = graph === undefined ? undefined : await snapshotOf(store, graph, runId);
  if (graph !== undefined && snapshot !== undefined)
    checkMigrations(graph, runId, snapshot.graph.stateVersion);
  const parsed = schemaOf(wait, graph).safeParse(value);
  if (!parsed.success) {
    throw schemaMismatch(
      'ANSWER_INVALID',
      `the answer to "${wait.node}" does not match its schema`,
      parsed.error,
    );
  }
  if (graph !== undefined && snapshot !== undefined)
    refuseUnappliable(graph, snapshot, wait, value);
  // The store records it only if nobody answered in between: one answer, first one wins.
  const answered = await store.answerWait(
    runId,
    requestId,
    JSON.stringify(parsed.data),
    options.by,
    clock.now(),
  );
  // A store that serves workers wakes the run with the answer, in the same transaction (the
  // WorkQueue contract): a crash or a lost connection between the two left it waiting for good.
  return answered;
}

/**
 * Refuses an answer that comes after its wait's deadline: one a host already closed as timed
 * out, or one past its due time that no host has closed yet (it will be: the timeout is what
 * the run routes on, never a late answer).
 */
async function refuseExpired(store: Store, wait: WaitRecord, now: number): Promise<void> {
  if (wait.answer !== null) return;
  const timer = (await store.listTimers(wait.runId)).find((t) => t.id === `wait:${wait.requestId}`);
  const { timeoutMs, deadlineAt } = JSON.parse(wait.request) as WaitRequest;
  const due = timer?.at ?? dueAt(wait.openedAt, timeoutMs, deadlineAt);
  if (due === undefined) return;
  const expired = wait.closedAt ? wait.closedAt >= due : now >= due;
  if (!expired) return;
  throw new WaymarkError(
    'WAIT_EXPIRED',
    `wait "${wait.requestId}" of run "${wait.runId}" timed out at ${new Date(due).toISOString()}: the run goes on as if nobody answered, and a late answer is not recorded`,
    { retryable: false, details: { runId: wait.runId, requestId: wait.requestId, dueAt: due } },
  );
}

async function snapshotOf(
  store: Store,
  graph: CompiledGraph,
  runId: string,
): Promise<Snapshot | undefined> {
  const loaded = await store.loadRun(runId);
  return loaded === undefined ? undefined : currentSnapshot(graph, loaded);
}

/**
 * Refuses an answer whose update the resume could not apply (a field that is not a state
 * field, an `update` that throws): recorded, it would close the wait and fail the node.
 * Checked on the state as it is now; a state that still needs migrating is checked on resume.
 */
function refuseUnappliable(
  graph: CompiledGraph,
  snapshot: Snapshot,
  wait: WaitRecord,
  value: unknown,
): void {
  if (snapshot.graph.stateVersion !== graph.stateVersion) return;
  const activation = snapshot.pending.find((a) => a.waiting?.requestId === wait.requestId);
  if (activation === undefined || graph.nodes.get(activation.node)?.wait === undefined) return;
  const made = answerUpdate(graph, activation, value, snapshot.state, snapshot.fanOuts);
  if (made.ok) return;
  throw new WaymarkError(
    made.error.code,
    `the answer to "${wait.node}" cannot be applied: ${made.error.message}`,
    { retryable: false, details: made.error.details },
  );
}

function schemaOf(wait: WaitRecord, graph: CompiledGraph | undefined): z.ZodType {
  const own = graph?.nodes.get(wait.node)?.wait?.answer;
  if (own !== undefined) return own;
  const request = JSON.parse(wait.request) as WaitRequest;
  if (request.schema === null) {
    throw new WaymarkError(
      'ANSWER_INVALID',
      `the answer schema of "${wait.node}" has no JSON form; pass { graph } to answer() to check it`,
      { retryable: false },
    );
  }
  return z.fromJSONSchema(request.schema as Parameters<typeof z.fromJSONSchema>[0]);
}
