import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { fixture, sandbox, testTimeoutMs } from '../cli/support.js';

// The command traces the runs it drives when WAYMARK_OTEL=1, to the provider the user
// registers in a module preloaded with NODE_OPTIONS; without it, it loads no OpenTelemetry.

const require = createRequire(import.meta.url);
const url = (name: string) => pathToFileURL(require.resolve(name)).href;

/** A preload that registers a provider writing each span as a JSON line to SPANS_FILE. */
const tracing = `
import { appendFileSync } from 'node:fs';
import { trace } from '${url('@opentelemetry/api')}';
import { BasicTracerProvider, SimpleSpanProcessor } from '${url('@opentelemetry/sdk-trace-base')}';
const exporter = {
  export(spans, done) {
    for (const s of spans)
      appendFileSync(process.env.SPANS_FILE, JSON.stringify({ name: s.name, attributes: s.attributes }) + '\\n');
    done({ code: 0 });
  },
  shutdown: () => Promise.resolve(),
};
trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }));
`;

describe('waymark with WAYMARK_OTEL', () => {
  it('sends a span per segment and per attempt to the registered provider', {
    timeout: testTimeoutMs,
  }, async () => {
    const box = sandbox();
    const preload = box.write('tracing.mjs', tracing);
    const spans = join(box.dir, 'spans.jsonl');
    const env = { NODE_OPTIONS: `--import=${pathToFileURL(preload).href}`, SPANS_FILE: spans };
    const untraced = await box.waymark(['run', fixture('metered.ts'), '--run-id', 'quiet'], {
      env,
    });
    expect(untraced.code).toBe(0);
    expect(existsSync(spans)).toBe(false);
    const traced = await box.waymark(['run', fixture('metered.ts'), '--run-id', 'traced'], {
      env: { ...env, WAYMARK_OTEL: '1' },
    });
    expect(traced.code).toBe(0);
    expect(traced.stderr).not.toContain('no OpenTelemetry tracer provider');
    const told = readFileSync(spans, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { name: string; attributes: Record<string, unknown> });
    const segment = told.find((s) => s.name.startsWith('invoke_workflow'));
    expect(segment?.attributes).toMatchObject({ 'waymark.run.id': 'traced' });
    expect(told.filter((s) => /^(invoke_node|invoke_agent) /.test(s.name)).length).toBeGreaterThan(
      0,
    );
  });

  it('says so when no provider is registered: the spans would go nowhere', {
    timeout: testTimeoutMs,
  }, async () => {
    const box = sandbox();
    const out = await box.waymark(['run', fixture('metered.ts'), '--run-id', 'unheard'], {
      env: { WAYMARK_OTEL: '1' },
    });
    expect(out.code).toBe(0);
    expect(out.errLines.filter((l) => l.includes('no OpenTelemetry tracer provider'))).toEqual([
      'warning WAYMARK_OTEL is set, but no OpenTelemetry tracer provider is registered, so no span is recorded: register one in a module the command preloads, NODE_OPTIONS="--import ./tracing.mjs" (docs/telemetry.md)',
    ]);
  });
});
