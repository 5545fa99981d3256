import { errorValue } from '../../error/error-value.js';
import type { CompiledGraph } from '../../graph/compiled.js';
import type { Store, TimerRecord, WaitRecord } from '../../store/store.js';
import { wakeOf } from '../core/activations.js';
import { answerUpdate } from '../core/answer-update.js';
import type { Activation, RunEvent, Snapshot } from '../core/snapshot.js';

/** What is stored about a wait beside its request id: enough for `answer()` to check an answer. */
export interface WaitRequest {
  readonly prompt: string;
  /** JSON Schema of the answer, or null when the schema has none (answer() then needs the graph). */
  readonly schema: unknown;
  readonly timeoutMs: number | null;
  /** When it closes unanswered, from the node's `deadline`; absent in waits without one. */
  readonly deadlineAt?: number;
  /** An event node's wait: the signal it takes, its graph and key (absent for a person's). */
  readonly event?: { readonly name: string; readonly graph: string; readonly key?: string };
}

/** The record of the wait a person node's activation opens. */
export function waitRecord(
  graph: CompiledGraph,
  runId: string,
  activation: Activation,
  openedAt: number,
): WaitRecord {
  const wait = activation.waiting!;
  const spec = graph.nodes.get(activation.node)!.wait!;
  const request: WaitRequest = {
    prompt: wait.prompt,
    schema: spec.schema,
    timeoutMs: spec.timeoutMs ?? null,
    ...(wait.deadlineAt !== undefined && { deadlineAt: wait.deadlineAt }),
    ...(spec.event !== undefined && {
      event: {
        name: spec.event.name,
        graph: graph.name,
        ...(wait.key !== undefined && { key: wait.key }),
      },
    }),
  };
  return {
    runId,
    requestId: wait.requestId,
    node: activation.node,
    activation: activation.id,
    request: JSON.stringify(request),
    openedAt,
    answer: null,
    answeredBy: null,
    answeredAt: null,
    closedAt: null,
  };
}

/** The timer of a wait that opens now with a `timeoutMs`: when it resolves as a timeout. */
export function waitTimer(
  graph: CompiledGraph,
  runId: string,
  activation: Activation,
  openedAt: number,
): TimerRecord | undefined {
  const timeoutMs = graph.nodes.get(activation.node)?.wait?.timeoutMs;
  const at = dueAt(openedAt, timeoutMs ?? null, activation.waiting?.deadlineAt);
  if (at === undefined || activation.waiting === undefined) return undefined;
  return { runId, id: `wait:${activation.waiting.requestId}`, at };
}

/**
 * When a wait closes unanswered: `timeoutMs` after it opened, or its `deadline`, whichever
 * comes first; undefined for a wait with neither.
 *
 * @example
 * dueAt(wait.openedAt, request.timeoutMs, request.deadlineAt);
 */
export function dueAt(
  openedAt: number,
  timeoutMs: number | null,
  deadlineAt: number | undefined,
): number | undefined {
  const after = timeoutMs === null ? undefined : openedAt + timeoutMs;
  if (deadlineAt === undefined) return after;
  return after === undefined ? deadlineAt : Math.min(after, deadlineAt);
}

/** The timer of a sleeping activation: when it wakes. */
export function sleepTimer(runId: string, activation: string, at: number): TimerRecord {
  return { runId, id: `sleep:${activation}`, at };
}

/** The timer of a run's deadline. */
export function deadlineTimer(runId: string, at: number): TimerRecord {
  return { runId, id: 'deadline', at };
}

/**
 * The events a resume owes a run at `now`: the deadline, if it passed; the wake of each sleep
 * that is due; an answer for each
 * answered wait (its update computed here, once, and recorded with it); a timeout error for
 * each wait whose timer is due. Waits missing from the store (a crash between a commit and the
 * record, in files written before waits were part of commits) are recorded again.
 */
export async function resumeEvents(
  store: Store,
  graph: CompiledGraph,
  snapshot: Snapshot,
  now: number,
): Promise<RunEvent[]> {
  const events: RunEvent[] = [];
  const deadlineAt = snapshot.limits.deadlineAt;
  if (deadlineAt !== undefined && now >= deadlineAt) events.push({ type: 'deadline' });
  // A sleep's time is in the snapshot: what is due needs no read.
  for (const a of snapshot.pending) {
    const until = a.sleeping?.until;
    if (until !== undefined && now >= until) events.push(wakeOf(a));
  }
  const waiting = snapshot.pending.filter((a) => a.waiting !== undefined);
  if (waiting.length === 0) return events;
  const [records, timers] = await Promise.all([
    store.listWaits(snapshot.runId),
    store.listTimers(snapshot.runId),
  ]);
  const byRequest = new Map(records.map((w) => [w.requestId, w]));
  const due = new Map(timers.map((t) => [t.id, t.at]));
  for (const activation of waiting) {
    const requestId = activation.waiting!.requestId;
    const record = byRequest.get(requestId);
    if (record === undefined) {
      await store.openWait(waitRecord(graph, snapshot.runId, activation, now));
      continue;
    }
    const where = { node: activation.node, activation: activation.id, attempt: activation.attempt };
    if (record.answer !== null) {
      const answer = JSON.parse(record.answer) as unknown;
      const made = answerUpdate(graph, activation, answer, snapshot.state, snapshot.fanOuts);
      events.push(
        made.ok
          ? { type: 'answered', activation: activation.id, answer, update: made.fields }
          : { type: 'failed', activation: activation.id, error: made.error, at: now },
      );
      continue;
    }
    // The timer says when; a file written before timers were stored has none: the wait's own
    // open time and the graph's timeout say it then.
    const timeoutMs = graph.nodes.get(activation.node)?.wait?.timeoutMs;
    const at =
      due.get(`wait:${requestId}`) ??
      dueAt(record.openedAt, timeoutMs ?? null, activation.waiting!.deadlineAt);
    if (at !== undefined && now >= at) {
      const message =
        activation.waiting!.deadlineAt === at
          ? `nobody answered "${activation.node}" by its deadline, ${new Date(at).toISOString()}`
          : `nobody answered "${activation.node}" within ${timeoutMs ?? at - record.openedAt} ms`;
      events.push({
        type: 'failed',
        activation: activation.id,
        error: errorValue(where, 'WAIT_TIMED_OUT', 'timeout', message),
        at: now,
      });
    }
  }
  return events;
}
