// Shared body of the per-step scenarios (chain, loop): waymark vs LangGraph.js in memory.

import { type Contender, compare, pairedRatio, progress, settingsFromEnv } from './measure.js';
import type { ScenarioReport } from './report.js';
import { waymarkOrigin } from './waymark.js';

/** Per-step targets from the issue. */
export const targetRatio = 100;
/** XState's async transition on this machine kind (BENCHMARKS.md: 34-39 us). */
export const xstateAsyncUs = 35;

export async function stepScenario(options: {
  readonly scenario: string;
  readonly title: string;
  readonly waymark: Contender;
  readonly langgraph: Contender;
}): Promise<ScenarioReport> {
  const settings = settingsFromEnv();
  progress(
    `${options.scenario}: warm-up ${settings.warmupMs} ms, ${settings.reps} repetitions of ~${settings.repMs} ms each`,
  );
  const [wm, lg] = await compare([options.waymark, options.langgraph], {
    settings,
    // LangGraph.js needs ~2,000 node executions before V8 settles (BENCHMARKS.md).
    minWarmUnits: 3000,
    scale: 1000,
  });
  const ratio = pairedRatio(lg!, wm!).median;
  return {
    scenario: options.scenario,
    title: options.title,
    waymarkOrigin,
    peerName: 'LangGraph.js',
    rows: [
      {
        measure: `${options.title}: per node step`,
        unit: 'us',
        waymark: wm!.perUnit,
        peer: lg!.perUnit,
        ratio,
        target: `>= ${targetRatio}x and < ${xstateAsyncUs} us`,
        met: ratio >= targetRatio && wm!.perUnit.median < xstateAsyncUs,
      },
    ],
    details: { settings, waymark: wm, langgraph: lg },
  };
}
