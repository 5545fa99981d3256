// A 100-item map whose branch is a 4-node subgraph with a router, in memory and on SQLite:
// waymark's `.subgraph()` mapped with `.map()` vs the same branch declared flat in waymark (the
// cost of the subgraph itself, goal within 1.5x), and vs LangGraph.js, a compiled subgraph as a
// node reached by one `Send` per item. bench/run.ts starts it twice, one process each:
//
//   node --import tsx bench/subgraph.ts memory
//   node --import tsx bench/subgraph.ts sqlite
//
// Run alone: npm run bench -- subgraph

import { setMaxListeners } from 'node:events';
import { join } from 'node:path';
import {
  Annotation,
  END as LG_END,
  START as LG_START,
  Send,
  StateGraph,
} from '@langchain/langgraph';
import { z } from 'zod';
import type { CompiledGraph, Store } from '../src/index.js';
import { stepLimit } from './lib/graphs.js';
import {
  type Contender,
  check,
  compare,
  pairedRatio,
  progress,
  settingsFromEnv,
  stat,
} from './lib/measure.js';
import { emit } from './lib/report.js';
import { langgraphSaver, tempDir } from './lib/sqlite.js';
import { loadWaymarkSqlite, waymarkOrigin, wm } from './lib/waymark.js';

const { END, append, graph, replace, run } = wm;

const mode = process.argv[2];
if (mode !== 'memory' && mode !== 'sqlite') {
  process.stderr.write('usage: node --import tsx bench/subgraph.ts memory|sqlite\n');
  process.exit(2);
}

const width = 100;
const nodesPerItem = 4;
/** Each item runs a, b and one of c | d (the router picks): three node bodies. */
const bodiesPerItem = 3;
const steps = width * bodiesPerItem;
/** From the issue: a subgraph step within 1.5x of the flat graph's. */
const flatTarget = 1.5;
const items = Array.from({ length: width }, (_, i) => i);
const executions = { count: 0 };

// Past Node's default of 10 abort listeners per signal Node builds a warning with a stack per
// task (LangGraph.js adds one per task): that is not the engines' work.
setMaxListeners(10 * width);

// ---- waymark: the child, mapped ------------------------------------------------------------

const Child = z.object({
  item: z.number(),
  n: z.number().default(0),
  out: z.array(z.number()).default([]),
});
const child = graph('review', {
  state: Child,
  input: Child.pick({ item: true }),
  output: Child.pick({ out: true }),
})
  .node(
    'a',
    async (s) => {
      executions.count++;
      return { n: s.item };
    },
    { reads: ['item'], writes: ['n'] },
  )
  .node(
    'b',
    async () => {
      executions.count++;
      return {};
    },
    { reads: ['n'], writes: [] },
  )
  .node(
    'c',
    async (s) => {
      executions.count++;
      return { out: [s.item] };
    },
    { reads: ['item'], writes: ['out'] },
  )
  .node(
    'd',
    async (s) => {
      executions.count++;
      return { out: [s.item] };
    },
    { reads: ['item'], writes: ['out'] },
  )
  .edge('a', 'b')
  .route('b', (s) => (s.n % 2 === 0 ? 'c' : 'd'), ['c', 'd'])
  .edge('c', END)
  .edge('d', END)
  .entry('a')
  .compile();

const Parent = z.object({ items: z.array(z.number()), out: z.array(z.number()).default([]) });
const nested = graph('subgraph-map', { state: Parent, reducers: { out: append } })
  .node('start', async () => ({}), { reads: [], writes: [] })
  .subgraph('review', child, {
    input: (_s, { item }) => ({ item: item as number }),
    output: { out: 'out' },
    reads: [],
    writes: ['out'],
  })
  .node('join', async () => ({}), { reads: [], writes: [] })
  .map('start', { over: 'items', branch: 'review', join: 'join', concurrency: width })
  .edge('review', 'join')
  .edge('join', END)
  .entry('start')
  .compile();

// ---- waymark: the same branch, flat ------------------------------------------------------

const Flat = z.object({
  items: z.array(z.number()),
  n: z.number().default(0),
  out: z.array(z.number()).default([]),
});
const flat = graph('flat-map', { state: Flat, reducers: { out: append, n: replace } })
  .node('start', async () => ({}), { reads: [], writes: [] })
  .node(
    'a',
    async (_s, ctx) => {
      executions.count++;
      return { n: ctx.item as number };
    },
    { reads: [], writes: ['n'] },
  )
  .node(
    'b',
    async () => {
      executions.count++;
      return {};
    },
    { reads: ['n'], writes: [] },
  )
  .node(
    'c',
    async (_s, ctx) => {
      executions.count++;
      return { out: [ctx.item as number] };
    },
    { reads: [], writes: ['out'] },
  )
  .node(
    'd',
    async (_s, ctx) => {
      executions.count++;
      return { out: [ctx.item as number] };
    },
    { reads: [], writes: ['out'] },
  )
  .node('join', async () => ({}), { reads: [], writes: [] })
  .map('start', { over: 'items', branch: 'a', join: 'join', concurrency: width })
  .edge('a', 'b')
  .route('b', (s) => (s.n % 2 === 0 ? 'c' : 'd'), ['c', 'd'])
  .edge('c', 'join')
  .edge('d', 'join')
  .edge('join', END)
  .entry('start')
  .compile();

// ---- LangGraph.js: a compiled subgraph as a node, one Send per item ---------------------------

const concat = (a: number[], b: number[]) => a.concat(b);
const LgChild = Annotation.Root({
  item: Annotation<number>,
  n: Annotation<number>,
  out: Annotation<number[]>({ reducer: concat, default: () => [] }),
});
const lgChild = new StateGraph(LgChild)
  .addNode('a', async (s) => {
    executions.count++;
    return { n: s.item };
  })
  .addNode('b', async () => {
    executions.count++;
    return {};
  })
  .addNode('c', async (s) => {
    executions.count++;
    return { out: [s.item] };
  })
  .addNode('d', async (s) => {
    executions.count++;
    return { out: [s.item] };
  })
  .addEdge(LG_START, 'a')
  .addEdge('a', 'b')
  .addConditionalEdges('b', (s) => (s.n % 2 === 0 ? 'c' : 'd'), ['c', 'd'])
  .addEdge('c', LG_END)
  .addEdge('d', LG_END)
  .compile();
const LgParent = Annotation.Root({
  items: Annotation<number[]>,
  out: Annotation<number[]>({ reducer: concat, default: () => [] }),
});
const lgBuilder = new StateGraph(LgParent)
  .addNode('start', async () => ({}))
  .addNode('review', lgChild)
  .addNode('join', async () => ({}))
  .addEdge(LG_START, 'start')
  .addConditionalEdges('start', (s) => s.items.map((item) => new Send('review', { item })), [
    'review',
  ])
  .addEdge('review', 'join')
  .addEdge('join', LG_END);

// ---- the contenders --------------------------------------------------------------------------

let store: Store | undefined;
let saver: ReturnType<typeof langgraphSaver> | undefined;
if (mode === 'sqlite') {
  const { SqliteStore } = await loadWaymarkSqlite();
  const dir = tempDir('subgraph');
  store = new SqliteStore({ path: join(dir, 'waymark.db') });
  saver = langgraphSaver(join(dir, 'langgraph.db'));
}
const lgGraph = lgBuilder.compile(saver === undefined ? {} : { checkpointer: saver });
let threads = 0;

const inOrder = (out: readonly number[]) => out.length === width && out.every((v, i) => v === i);

function waymark(name: string, g: CompiledGraph, activations: number): Contender {
  return {
    name,
    units: steps,
    call: async () => {
      executions.count = 0;
      const r = await run(g, { items }, { maxSteps: stepLimit, ...(store && { store }) });
      check(r.status === 'succeeded', `${name} ended ${r.status}`);
      check(inOrder(r.state.out as number[]), `${name} merged out of item order`);
      check(executions.count === steps, `${name} ran ${executions.count} node bodies`);
      check(r.steps === activations, `${name} took ${r.steps} steps`);
      return undefined;
    },
  };
}

// start, the 3 node bodies of each item, the join: the subgraph's entry and exit map the input
// in and the output out inline, in the transitions around them, with no steps of their own.
const nestedWm = waymark('waymark subgraph', nested as CompiledGraph, 2 + steps);
const flatWm = waymark('waymark flat', flat as CompiledGraph, 2 + steps);
const langgraph: Contender = {
  name: 'LangGraph.js',
  units: steps,
  call: async () => {
    executions.count = 0;
    const config = { recursionLimit: stepLimit, configurable: { thread_id: `t-${++threads}` } };
    const { out } = await lgGraph.invoke({ items }, config);
    const sorted = [...out].sort((a, b) => a - b);
    check(sorted.every((v, i) => v === i) && sorted.length === width, 'LangGraph.js lost an item');
    check(executions.count === steps, `LangGraph.js ran ${executions.count} node bodies`);
    return undefined;
  },
};

const settings = settingsFromEnv();
progress(
  `subgraph ${mode}: warm-up ${settings.warmupMs} ms, ${settings.reps} repetitions of ~${settings.repMs} ms each`,
);
const [wmResult, flatResult, lgResult] = await compare([nestedWm, flatWm, langgraph], {
  settings,
  // LangGraph.js needs ~2,000 node executions before V8 settles (BENCHMARKS.md).
  minWarmUnits: 3000,
  scale: 1000,
});
const vsLangGraph = pairedRatio(lgResult!, wmResult!).median;
const vsFlat = pairedRatio(wmResult!, flatResult!);
const where = mode === 'sqlite' ? 'SQLite' : 'in memory';
await (store as { close?: () => Promise<void> } | undefined)?.close?.();
saver?.db.close();

emit({
  scenario: 'subgraph',
  title: `${width}-item map of a ${nodesPerItem}-node subgraph, ${where}`,
  waymarkOrigin,
  peerName: 'LangGraph.js',
  rows: [
    {
      measure: `${width}-item map of a ${nodesPerItem}-node subgraph, ${where}, per node step`,
      unit: 'us',
      waymark: wmResult!.perUnit,
      peer: lgResult!.perUnit,
      ratio: vsLangGraph,
    },
    {
      measure: '  the same branch declared flat (waymark), per node step',
      unit: 'us',
      waymark: flatResult!.perUnit,
      text: `${flatResult!.perUnit.median.toFixed(1)} us; subgraph / flat ${vsFlat.median.toFixed(2)}x (${vsFlat.min.toFixed(2)}-${vsFlat.max.toFixed(2)})`,
      target: `subgraph <= ${flatTarget}x flat`,
      met: vsFlat.median <= flatTarget,
    },
  ],
  notes: [
    `subgraph ${mode}: per node step = run time / ${steps} node bodies (${width} items x ${bodiesPerItem} of the child's ${nodesPerItem} nodes, its router picking one of two); both waymark runs take ${2 + steps} activations (a subgraph's entry and exit are applied inline by the step); map concurrency ${width}; LangGraph.js a compiled StateGraph as a node, one Send per item${mode === 'sqlite' ? ', SqliteSaver (durability "async")' : ', no checkpointer'}.`,
  ],
  details: {
    settings,
    waymark: wmResult,
    flat: flatResult,
    langgraph: lgResult,
    vsFlat: stat(wmResult!.values.map((v, i) => v / flatResult!.values[i]!)),
  },
});
