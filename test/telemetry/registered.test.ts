import { trace } from '@opentelemetry/api';
import { BasicTracerProvider } from '@opentelemetry/sdk-trace-base';
import { expect, it } from 'vitest';
import { tracerRegistered } from '../../src/otel.js';

// With no tracer provider registered, OpenTelemetry's API hands out no-op spans: a run traced
// that way records nothing, which `waymark` says rather than staying silent (docs/telemetry.md).

it('tells a registered provider from none, and ends no probe span of its own', () => {
  expect(tracerRegistered()).toBe(false);
  const exported: string[] = [];
  const provider = new BasicTracerProvider({
    spanProcessors: [
      {
        onStart: () => {},
        onEnd: (span) => exported.push(span.name),
        forceFlush: async () => {},
        shutdown: async () => {},
      },
    ],
  });
  expect(tracerRegistered(provider)).toBe(true);
  trace.setGlobalTracerProvider(provider);
  try {
    expect(tracerRegistered()).toBe(true);
  } finally {
    trace.disable();
  }
  expect(exported).toEqual([]);
});
