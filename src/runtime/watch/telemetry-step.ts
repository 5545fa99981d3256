import type { ErrorValue } from '../../error/error-value.js';
import type { CompiledGraph } from '../../graph/compiled.js';
import { END } from '../../graph/end.js';
import { withoutUntracked } from '../../graph/untracked.js';
import type { Attempt } from '../attempt/execute.js';
import type { Activation, RunEvent, Snapshot, StepResult } from '../core/snapshot.js';
import { capCodes } from './stream.js';
import type { AttemptEnded, SegmentTelemetry } from './telemetry.js';
import type { TraceEntry } from './trace.js';

/**
 * Tells an observed segment what one committed step recorded: the attempts it ended (or read
 * back), the waits it opened or answered, the join it released, the cap that stopped the run.
 * Called after the commit landed, with the same facts the trace and the stream get, so a span
 * never says more than the history does.
 *
 * @example
 * if (segment !== undefined) tellStep(segment, graph, before, event, result, entries);
 */
export function tellStep(
  segment: SegmentTelemetry,
  graph: CompiledGraph,
  before: Snapshot,
  event: RunEvent,
  result: StepResult,
  entries: readonly TraceEntry[],
): void {
  const after = result.snapshot;
  if (event.type === 'answered')
    segment.waitAnswered({ activation: event.activation, answer: event.answer });
  const outcome = result.outcome;
  for (const entry of entries) {
    if (entry.reused === true) {
      segment.reused(entry);
      continue;
    }
    const node = graph.nodes.get(entry.node);
    const ended: { -readonly [K in keyof AttemptEnded]: AttemptEnded[K] } = {
      kind: node?.def.kind ?? 'code',
    };
    if (outcome?.activation.id === entry.activation && outcome.status === 'succeeded') {
      if (node?.router !== undefined) ended.route = routeOf(entry.activation, before, after);
      // What telemetry exports is recorded elsewhere: without the graph's untracked fields.
      if (event.type === 'completed' || event.type === 'answered')
        ended.update =
          graph.untracked === undefined
            ? event.update
            : withoutUntracked(graph.untracked, event.update);
    }
    segment.attemptEnded(entry, ended);
  }
  for (const command of result.commands) {
    if (command.type === 'wait') {
      const a = command.activation;
      segment.waitOpened({
        activation: a.id,
        node: a.node,
        requestId: a.waiting!.requestId,
        prompt: a.waiting!.prompt,
      });
    } else if (command.type === 'execute' && command.activation.join !== undefined) {
      const a = command.activation;
      segment.joinReleased({ activation: a.id, node: a.node, join: a.join! });
    }
  }
  // A cap an `onError` route handles is recorded in the run's errors; one that stops the run
  // may only be its stopping error.
  let capped = false;
  for (let i = before.errors.length; i < after.errors.length; i++) {
    const error = after.errors[i]!;
    if (!capCodes.has(error.code)) continue;
    capped = true;
    segment.capHit(error);
  }
  if (!capped && after.status !== before.status && 'error' in after) {
    const error = after.error as ErrorValue;
    if (capCodes.has(error.code)) segment.capHit(error);
  }
}

/**
 * The trace entry of an attempt a worker ran, as far as the worker knows it: whether the
 * failure is tried again is the orchestrator's to decide, later.
 *
 * @example
 * task.ended(attemptEntry(activation, attempt), { kind, recorded });
 */
export function attemptEntry(activation: Activation, attempt: Attempt): TraceEntry {
  const { event } = attempt;
  const entry: { -readonly [K in keyof TraceEntry]: TraceEntry[K] } = {
    node: activation.node,
    activation: activation.id,
    parent: activation.parent,
    attempt: activation.attempt,
    startedAt: attempt.startedAt,
    durationMs: attempt.endedAt - attempt.startedAt,
    status: event.type === 'completed' ? 'succeeded' : 'failed',
    retried: false,
  };
  if (event.usage !== undefined) entry.usage = event.usage;
  if (attempt.turns !== undefined) entry.turns = attempt.turns;
  if (event.type === 'failed') {
    const { code, class: errorClass, message } = event.error;
    entry.error = { code, class: errorClass, message };
  }
  return entry;
}

/**
 * Where a completed activation's router sent the run: the activations it added (scheduled,
 * waiting, paused at a breakpoint, or held by a visit cap), or END when it added none.
 */
function routeOf(activation: string, before: Snapshot, after: Snapshot): string[] {
  const known = new Set(before.pending.map((a) => a.id));
  const to = after.pending.filter((a) => a.parent === activation && !known.has(a.id));
  return to.length === 0 ? [END] : to.map((a) => a.node);
}
