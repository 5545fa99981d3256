// A 100-way map fan-out joined with an append reducer, in memory: waymark's `.map()` vs
// LangGraph.js's `Send` map-reduce. Run alone: npm run bench -- fanout

import { setMaxListeners } from 'node:events';
import { executions, langgraphFanOut, stepLimit, waymarkFanOut } from './lib/graphs.js';
import { check, compare, pairedRatio, progress, settingsFromEnv } from './lib/measure.js';
import { emit } from './lib/report.js';
import { waymarkOrigin, wm } from './lib/waymark.js';

const { run } = wm;

const width = 100;
const targetRatio = 50;
const items = Array.from({ length: width }, (_, i) => i);

// LangGraph.js adds an abort listener per task to one signal; past Node's default of 10 per
// target, Node prints a MaxListenersExceededWarning, building an Error with a stack trace each
// time. That is a console warning, not LangGraph.js's work: the limit is raised so it is not
// counted (it only changes when Node warns).
setMaxListeners(10 * width);

const wmGraph = waymarkFanOut(width);
const lgGraph = langgraphFanOut();
const settings = settingsFromEnv();
progress(
  `fanout: warm-up ${settings.warmupMs} ms, ${settings.reps} repetitions of ~${settings.repMs} ms each`,
);

/** LangGraph.js's order of `out`, from the last checked call: it is not part of the check. */
let langgraphInOrder = true;

const [wmResult, lgResult] = await compare(
  [
    {
      name: 'waymark',
      units: width,
      call: async () => {
        executions.count = 0;
        const r = await run(wmGraph, { items, out: [] }, { maxSteps: stepLimit });
        check(r.status === 'succeeded', `waymark fan-out ended ${r.status}`);
        const out = r.state.out;
        check(out.length === width, `waymark fan-out joined ${out.length} items`);
        check(
          out.every((v, i) => v === i),
          'waymark fan-out merged its branches out of item order',
        );
        check(executions.count === width, `waymark fan-out ran ${executions.count} branches`);
        // start + one step per branch + join.
        check(r.steps === width + 2, `waymark fan-out ran ${r.steps} steps`);
        return undefined;
      },
    },
    {
      name: 'LangGraph.js',
      units: width,
      call: async () => {
        executions.count = 0;
        const out = (await lgGraph.invoke({ items }, { recursionLimit: stepLimit })).out;
        check(out.length === width, `LangGraph.js fan-out joined ${out.length} items`);
        const sorted = [...out].sort((a, b) => a - b);
        check(
          sorted.every((v, i) => v === i),
          'LangGraph.js fan-out lost or repeated an item',
        );
        langgraphInOrder = out.every((v, i) => v === i);
        check(executions.count === width, `LangGraph.js fan-out ran ${executions.count} branches`);
        return undefined;
      },
    },
  ],
  // LangGraph.js needs ~2,000 node executions before V8 settles (BENCHMARKS.md).
  { settings, minWarmUnits: 3000, scale: 1000 },
);

const ratio = pairedRatio(lgResult!, wmResult!).median;
emit({
  scenario: 'fanout',
  title: `${width}-way map fan-out + join`,
  waymarkOrigin,
  peerName: 'LangGraph.js',
  rows: [
    {
      measure: `${width}-way fan-out + append join, per branch`,
      unit: 'us',
      waymark: wmResult!.perUnit,
      peer: lgResult!.perUnit,
      ratio,
      target: `>= ${targetRatio}x`,
      met: ratio >= targetRatio,
    },
  ],
  notes: [
    `fanout: per branch = run time / ${width} (the run includes start and join); waymark .map() with concurrency ${width}, LangGraph.js one Send per item${langgraphInOrder ? '' : ' (its out came back out of item order)'}.`,
  ],
  details: { settings, width, waymark: wmResult, langgraph: lgResult, langgraphInOrder },
});
