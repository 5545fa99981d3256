// What OpenTelemetry costs per step: the 100-node in-memory chain without telemetry, with
// `otel()` and no tracer provider registered (the API's no-op), and with `otel()` recording
// into an SDK provider that exports nothing. Alternating in one process, paired ratios.
// Run alone: node --import tsx bench/telemetry.ts (src/ through tsx), or with
// BENCH_WAYMARK_BUILD=<bench/.dist/index.js> for a tsc build, as bench/run.ts passes it.

import { pathToFileURL } from 'node:url';
import { BasicTracerProvider } from '@opentelemetry/sdk-trace-base';
import type * as WaymarkOtel from '../src/otel.js';
import { executions, stepLimit, waymarkChain } from './lib/graphs.js';
import {
  type Contender,
  check,
  compare,
  pairedRatio,
  progress,
  settingsFromEnv,
} from './lib/measure.js';
import { emit } from './lib/report.js';
import { waymarkOrigin, wm } from './lib/waymark.js';

const build = process.env.BENCH_WAYMARK_BUILD;
const { otel }: typeof WaymarkOtel = build
  ? await import(new URL('otel.js', pathToFileURL(build)).href)
  : await import('../src/otel.js');

const size = 100;
const chain = waymarkChain(size);

function contender(name: string, telemetry: ReturnType<typeof otel> | undefined): Contender {
  return {
    name,
    units: size,
    call: async () => {
      executions.count = 0;
      const options = telemetry === undefined ? {} : { telemetry };
      const r = await wm.run(chain, { counter: 0 }, { maxSteps: stepLimit, ...options });
      check(r.status === 'succeeded', `${name}: chain ended ${r.status}`);
      check(r.steps === size && executions.count === size, `${name}: ran ${r.steps} steps`);
      return undefined;
    },
  };
}

const settings = settingsFromEnv();
progress(`telemetry: warm-up ${settings.warmupMs} ms, ${settings.reps} repetitions`);
const recording = new BasicTracerProvider();
const [off, noop, sdk] = await compare(
  [
    contender('no telemetry', undefined),
    contender('otel(), no provider', otel()),
    contender('otel(), SDK recording', otel({ tracerProvider: recording })),
  ],
  { settings, minWarmUnits: 3000, scale: 1000 },
);
const row = (measure: string, result: typeof off, ratio?: number) => ({
  measure,
  unit: 'us',
  waymark: result!.perUnit,
  ...(ratio !== undefined && { ratio, text: `${ratio.toFixed(3)}x the time without` }),
});
emit({
  scenario: 'telemetry',
  title: `${size}-node chain, in memory, per node step`,
  waymarkOrigin,
  rows: [
    row('no telemetry', off),
    row('otel(), no provider registered', noop, pairedRatio(noop!, off!).median),
    row('otel(), SDK provider recording', sdk, pairedRatio(sdk!, off!).median),
  ],
  details: { settings, off, noop, sdk },
});
