// A 100-node linear chain of async nodes, in memory: waymark vs LangGraph.js (no checkpointer).
// Run alone: npm run bench -- chain

import { executions, langgraphChain, stepLimit, waymarkChain } from './lib/graphs.js';
import { check } from './lib/measure.js';
import { emit } from './lib/report.js';
import { stepScenario } from './lib/steps.js';
import { wm } from './lib/waymark.js';

const { run } = wm;

const size = 100;
const wmGraph = waymarkChain(size);
const lgGraph = langgraphChain(size);

const report = await stepScenario({
  scenario: 'chain',
  title: `${size}-node chain`,
  waymark: {
    name: 'waymark',
    units: size,
    call: async () => {
      executions.count = 0;
      const r = await run(wmGraph, { counter: 0 }, { maxSteps: stepLimit });
      check(r.status === 'succeeded', `waymark chain ended ${r.status}`);
      check(r.state.counter === size, `waymark chain counter ${r.state.counter}`);
      check(r.steps === size && executions.count === size, `waymark chain ran ${r.steps} steps`);
      return undefined;
    },
  },
  langgraph: {
    name: 'LangGraph.js',
    units: size,
    call: async () => {
      executions.count = 0;
      const out = await lgGraph.invoke({ counter: 0 }, { recursionLimit: stepLimit });
      check(out.counter === size, `LangGraph.js chain counter ${out.counter}`);
      check(executions.count === size, `LangGraph.js chain ran ${executions.count} nodes`);
      return undefined;
    },
  },
});
emit(report);
