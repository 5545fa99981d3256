// Declaring + compiling a 10,000-node chain: waymark vs LangGraph.js.
// Run alone: npm run bench -- build

import { performance } from 'node:perf_hooks';
import { langgraphChainBuilder, waymarkChainBuilder } from './lib/graphs.js';
import { check, compare, pairedRatio, progress, settingsFromEnv } from './lib/measure.js';
import { emit } from './lib/report.js';
import { waymarkOrigin } from './lib/waymark.js';

const size = 10_000;
const targetMs = 30;
const settings = settingsFromEnv();
progress(`build: warm-up ${settings.warmupMs} ms, ${settings.reps} repetitions`);

const [wm, lg] = await compare(
  [
    {
      name: 'waymark',
      units: 1,
      call: async () => {
        const t0 = performance.now();
        const builder = waymarkChainBuilder(size);
        const t1 = performance.now();
        const g = builder.compile();
        const t2 = performance.now();
        check(g.nodes.size === size, `waymark compiled ${g.nodes.size} nodes`);
        return { declare: t1 - t0, compile: t2 - t1 };
      },
    },
    {
      name: 'LangGraph.js',
      units: 1,
      call: async () => {
        const t0 = performance.now();
        const builder = langgraphChainBuilder(size);
        const t1 = performance.now();
        const g = builder.compile();
        const t2 = performance.now();
        // Its compiled graph also holds the __start__ node.
        const nodes = Object.keys(g.nodes).length;
        check(nodes === size + 1, `LangGraph.js compiled ${nodes} nodes`);
        return { declare: t1 - t0, compile: t2 - t1 };
      },
    },
  ],
  { settings, minWarmUnits: 0, scale: 1 },
);

emit({
  scenario: 'build',
  waymarkOrigin,
  title: `declare + compile a ${size.toLocaleString('en-US')}-node chain`,
  peerName: 'LangGraph.js',
  rows: [
    {
      measure: `declare + compile ${size.toLocaleString('en-US')}-node chain`,
      unit: 'ms',
      waymark: wm!.perUnit,
      peer: lg!.perUnit,
      ratio: pairedRatio(lg!, wm!).median,
      target: `< ${targetMs} ms`,
      met: wm!.perUnit.median < targetMs,
    },
    ...(['declare', 'compile'] as const).map((part) => {
      const w = wm!.parts[part]!;
      const l = lg!.parts[part]!;
      return {
        measure: `  of which ${part}`,
        unit: 'ms',
        waymark: w,
        peer: l,
        ratio: l.median / w.median,
      };
    }),
  ],
  details: { settings, size, waymark: wm, langgraph: lg },
});
