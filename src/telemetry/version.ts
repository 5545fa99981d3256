import { createRequire } from 'node:module';

/**
 * waymark's version, for the tracer's instrumentation scope. package.json sits two folders up
 * both from src/telemetry and from dist/telemetry.
 */
export const waymarkVersion: string = (() => {
  try {
    const pkg = createRequire(import.meta.url)('../../package.json') as { version?: unknown };
    return typeof pkg.version === 'string' ? pkg.version : '0.0.0';
  } catch {
    return '0.0.0';
  }
})();
