import { context } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { otel } from '../../src/otel.js';

/**
 * An OpenTelemetry SDK that keeps every ended span in memory, and `otel()` telemetry writing to
 * it. The provider is passed to `otel()`, never registered globally, so tests cannot see each
 * other's spans; only the context manager (what carries the active span across awaits) is global.
 */
export function tracing(options: { readonly content?: boolean } = {}) {
  const exporter = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({
    spanProcessors: [new SimpleSpanProcessor(exporter)],
  });
  const telemetry = otel({ tracerProvider, ...options });
  const spans = () => exporter.getFinishedSpans();
  return { telemetry, spans, exporter, tracerProvider };
}

/** Installs the AsyncLocalStorage context manager for a test file; returns the undo. */
export function withContextManager(): () => void {
  const manager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(manager);
  return () => {
    manager.disable();
    context.disable();
  };
}

/** The segment spans, in the order they ended. */
export function segments(spans: readonly ReadableSpan[]): ReadableSpan[] {
  return spans.filter((s) => s.name.startsWith('invoke_workflow '));
}

/** The spans whose parent is `parent`. */
export function childrenOf(spans: readonly ReadableSpan[], parent: ReadableSpan): ReadableSpan[] {
  const { spanId } = parent.spanContext();
  return spans.filter((s) => s.parentSpanContext?.spanId === spanId);
}

/** The activation spans of a segment: its children, without model calls. */
export function activationsOf(
  spans: readonly ReadableSpan[],
  segment: ReadableSpan,
): ReadableSpan[] {
  return childrenOf(spans, segment).filter(
    (s) => s.name.startsWith('invoke_node ') || s.name.startsWith('invoke_agent '),
  );
}

/** How many of `items` each key occurs in, as a plain object (stable to compare). */
export function countBy<T>(items: readonly T[], key: (item: T) => string): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const item of items) counts[key(item)] = (counts[key(item)] ?? 0) + 1;
  return Object.fromEntries(Object.entries(counts).sort(([a], [b]) => a.localeCompare(b)));
}
