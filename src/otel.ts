// The public surface of `waymark/otel`: OpenTelemetry spans for runs. It is its own entry so that
// @opentelemetry/api (an optional peer dependency) loads only for those who import it.

export type { OtelOptions } from './telemetry/otel-telemetry.js';
export { otel, tracerRegistered } from './telemetry/otel-telemetry.js';
