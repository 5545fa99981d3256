import { WaymarkError } from '../error/waymark-error.js';
import type { Telemetry } from '../runtime/watch/telemetry.js';
import type { Io } from './io.js';

let loaded: Promise<Telemetry | undefined> | undefined;

/**
 * The telemetry a command drives runs with: OpenTelemetry spans (`otel()` of `waymark/otel`, to
 * the globally registered provider) when `WAYMARK_OTEL=1`, else none, and nothing of
 * `@opentelemetry/api` is loaded. The provider is the user's to register, in a module the
 * command preloads (`NODE_OPTIONS="--import ./tracing.mjs"`): see docs/telemetry.md.
 * With WAYMARK_OTEL set and no provider registered, it says so on stderr: spans would go nowhere.
 * @throws WaymarkError `USAGE_INVALID` when WAYMARK_OTEL is set and `@opentelemetry/api` is not
 *   installed.
 */
export function cliTelemetry(io: Io): Promise<Telemetry | undefined> {
  loaded ??= (async () => {
    const wanted = process.env.WAYMARK_OTEL;
    if (wanted === undefined || wanted === '' || wanted === '0' || wanted === 'false')
      return undefined;
    try {
      const { otel, tracerRegistered } = await import('../telemetry/otel-telemetry.js');
      if (!tracerRegistered()) {
        io.error(
          `${io.c.yellow('warning')} WAYMARK_OTEL is set, but no OpenTelemetry tracer provider is registered, so no span is recorded: register one in a module the command preloads, NODE_OPTIONS="--import ./tracing.mjs" (docs/telemetry.md)`,
        );
      }
      return otel();
    } catch (cause) {
      if ((cause as { code?: unknown }).code !== 'ERR_MODULE_NOT_FOUND') throw cause;
      throw new WaymarkError(
        'USAGE_INVALID',
        'WAYMARK_OTEL is set, and spans go through @opentelemetry/api, which is not installed: npm install @opentelemetry/api (or unset WAYMARK_OTEL)',
        { retryable: false, cause },
      );
    }
  })();
  return loaded;
}
