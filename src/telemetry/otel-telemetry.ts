import { isSpanContextValid, type Tracer, type TracerProvider, trace } from '@opentelemetry/api';
import type { Telemetry } from '../runtime/watch/telemetry.js';
import { OtelSegment } from './segment-span.js';
import { startTask } from './task-span.js';
import { waymarkVersion } from './version.js';

/** Options of {@link otel}. */
export interface OtelOptions {
  /** Where spans go; by default the global provider (`trace.setGlobalTracerProvider`). */
  readonly tracerProvider?: TracerProvider;
  /**
   * Record content: each activation's update, a wait's prompt and its answer. Off by default,
   * as the GenAI conventions advise: state and answers may hold what a trace backend must not.
   */
  readonly content?: boolean;
}

/**
 * OpenTelemetry spans for the runs it is given to, through `@opentelemetry/api` alone: an
 * `invoke_workflow {graph}` span per segment (one drive of a run by one process), a child span
 * per attempt (`invoke_node {node}`, or `invoke_agent {node}` with a `chat {model}` span per
 * model call), links from each segment to the one before. With no tracer provider registered
 * it records nothing and costs one no-op span per segment. See docs/telemetry.md.
 *
 * @example
 * import { otel } from 'waymark/otel';
 * const telemetry = otel();
 * const first = await run(g, input, { store, telemetry });      // waits for a person
 * await answer(store, first.runId, requestId, { approved: true }, { by: 'lead' });
 * await resume(store, g, first.runId, { telemetry });            // linked to the first segment
 */
export function otel(options: OtelOptions = {}): Telemetry {
  const content = options.content === true;
  let tracer: Tracer | undefined;
  // The global provider's tracer is a proxy: one taken before a provider is registered still
  // reaches it.
  const tracerOf = () =>
    (tracer ??= (options.tracerProvider ?? trace.getTracerProvider()).getTracer(
      'waymark',
      waymarkVersion,
    ));
  return {
    segment: (start) => OtelSegment.start(tracerOf(), start, content),
    task: (start) => startTask(tracerOf(), start, content),
  };
}

/**
 * Whether a tracer provider is registered globally (or `provider` is a real one): with none,
 * every span is a no-op and nothing is recorded. A probe span is started, never ended, so no
 * provider exports it.
 */
export function tracerRegistered(provider: TracerProvider = trace.getTracerProvider()): boolean {
  const probe = provider.getTracer('waymark-probe').startSpan('waymark.probe', { root: true });
  return isSpanContextValid(probe.spanContext());
}
