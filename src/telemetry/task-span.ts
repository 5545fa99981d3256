import { context, SpanKind, type Tracer, trace } from '@opentelemetry/api';
import type { TaskStart, TaskTelemetry } from '../runtime/watch/telemetry.js';
import { activationAttributes, endActivationSpan, operationOf } from './activation-span.js';
import { wm } from './attributes.js';
import { parseTraceparent } from './traceparent.js';

/**
 * A worker's attempt as an `invoke_node` (or `invoke_agent`) span: a child of the trace context
 * its run stored when the task was scheduled (a remote parent: the segment or `enqueue` that
 * started the run, in another process), or a root when the run stored none. Undefined when the
 * tracer records nothing.
 *
 * @example
 * const observed = startTask(tracer, start, false);
 */
export function startTask(
  tracer: Tracer,
  start: TaskStart,
  content: boolean,
): TaskTelemetry | undefined {
  const remote = start.parent === undefined ? undefined : parseTraceparent(start.parent);
  const parent =
    remote === undefined ? context.active() : trace.setSpanContext(context.active(), remote);
  const { activation, kind } = start;
  const span = tracer.startSpan(
    `${operationOf(kind)} ${activation.node}`,
    {
      kind: SpanKind.INTERNAL,
      attributes: {
        ...activationAttributes(start.runId, activation, kind),
        [wm.graph]: start.graph.name,
        [wm.graphHash]: start.graph.hash,
        [wm.worker]: start.worker,
      },
    },
    parent,
  );
  if (!span.isRecording()) return undefined;
  const scope = trace.setSpan(parent, span);
  const startedAt = Date.now();
  return {
    within: (body) => context.with(scope, body),
    ended(entry, ended) {
      span.setAttribute(wm.recorded, ended.recorded);
      endActivationSpan(tracer, span, parent, startedAt, entry, ended, content);
    },
  };
}
