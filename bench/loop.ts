// A 2-node loop run for 1,000 iterations (2,000 async node executions), in memory:
// waymark vs LangGraph.js (no checkpointer). Run alone: npm run bench -- loop

import { executions, langgraphLoop, stepLimit, waymarkLoop } from './lib/graphs.js';
import { check } from './lib/measure.js';
import { emit } from './lib/report.js';
import { stepScenario } from './lib/steps.js';
import { wm } from './lib/waymark.js';

const { run } = wm;

const iterations = 1000;
const nodeSteps = 2 * iterations;
const wmGraph = waymarkLoop(iterations);
const lgGraph = langgraphLoop(iterations);

const report = await stepScenario({
  scenario: 'loop',
  title: `2-node loop x${iterations.toLocaleString('en-US')}`,
  waymark: {
    name: 'waymark',
    units: nodeSteps,
    call: async () => {
      executions.count = 0;
      const r = await run(wmGraph, { i: 0 }, { maxSteps: stepLimit });
      check(r.status === 'succeeded', `waymark loop ended ${r.status}`);
      check(r.state.i === iterations, `waymark loop i ${r.state.i}`);
      check(
        r.steps === nodeSteps && executions.count === nodeSteps,
        `waymark loop ran ${r.steps} steps`,
      );
      return undefined;
    },
  },
  langgraph: {
    name: 'LangGraph.js',
    units: nodeSteps,
    call: async () => {
      executions.count = 0;
      const out = await lgGraph.invoke({ i: 0 }, { recursionLimit: stepLimit });
      check(out.i === iterations, `LangGraph.js loop i ${out.i}`);
      check(executions.count === nodeSteps, `LangGraph.js loop ran ${executions.count} nodes`);
      return undefined;
    },
  },
});
emit(report);
