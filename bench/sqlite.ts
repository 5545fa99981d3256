// Per-step cost of a durable run: waymark with its SQLite store (one commit per activation,
// before the next node starts) vs LangGraph.js with its SqliteSaver (a checkpoint per step), on
// the graphs of the in-memory scenarios. Both write to their own file on disk, in WAL mode at
// synchronous=NORMAL. bench/run.ts starts it twice, one process per graph:
//
//   node --import tsx bench/sqlite.ts chain      the 100-node chain
//   node --import tsx bench/sqlite.ts loop       the 2-node loop x1,000
//
// Run alone: npm run bench -- sqlite

import { join } from 'node:path';
import type { RunResult } from '../src/index.js';
import {
  executions,
  langgraphChainBuilder,
  langgraphLoopBuilder,
  stepLimit,
  waymarkChain,
  waymarkLoop,
} from './lib/graphs.js';
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
import { commitFloor, langgraphSaver, modeOf, tempDir } from './lib/sqlite.js';
import { loadWaymarkSqlite, waymarkOrigin, wm } from './lib/waymark.js';

const { run } = wm;
const { SqliteStore } = await loadWaymarkSqlite();

const shape = process.argv[2];
if (shape !== 'chain' && shape !== 'loop') {
  process.stderr.write('usage: node --import tsx bench/sqlite.ts chain|loop\n');
  process.exit(2);
}

/** From the issue: at least 20x lower per-step cost than LangGraph.js's SqliteSaver. */
const targetRatio = 20;
const chainSize = 100;
const iterations = 1000;

const dir = tempDir('sqlite');
const store = new SqliteStore({ path: join(dir, 'waymark.db') });
const saver = langgraphSaver(join(dir, 'langgraph.db'));
let threads = 0;

/** What one durable run must show, on either engine, for the call to count. */
interface Graphs {
  readonly title: string;
  readonly steps: number;
  readonly waymark: () => Promise<RunResult<Record<string, unknown>>>;
  readonly waymarkDone: (state: Record<string, unknown>) => boolean;
  readonly langgraph: (threadId: string) => Promise<Record<string, unknown>>;
}

function chainGraphs(): Graphs {
  const wmGraph = waymarkChain(chainSize);
  const lgGraph = langgraphChainBuilder(chainSize).compile({ checkpointer: saver });
  return {
    title: `${chainSize}-node chain`,
    steps: chainSize,
    waymark: () => run(wmGraph, { counter: 0 }, { store, maxSteps: stepLimit }),
    waymarkDone: (s) => s.counter === chainSize,
    langgraph: (thread_id) =>
      lgGraph.invoke(
        { counter: 0 },
        { configurable: { thread_id }, recursionLimit: stepLimit },
      ) as Promise<Record<string, unknown>>,
  };
}

function loopGraphs(): Graphs {
  const wmGraph = waymarkLoop(iterations);
  const lgGraph = langgraphLoopBuilder(iterations).compile({ checkpointer: saver });
  return {
    title: `2-node loop x${iterations.toLocaleString('en-US')}`,
    steps: 2 * iterations,
    waymark: () => run(wmGraph, { i: 0 }, { store, maxSteps: stepLimit }),
    waymarkDone: (s) => s.i === iterations,
    langgraph: (thread_id) =>
      lgGraph.invoke(
        { i: 0 },
        { configurable: { thread_id }, recursionLimit: stepLimit },
      ) as Promise<Record<string, unknown>>,
  };
}

const graphs = shape === 'chain' ? chainGraphs() : loopGraphs();
const done = (state: Record<string, unknown> | undefined) =>
  state !== undefined && graphs.waymarkDone(state);

const waymark: Contender = {
  name: 'waymark',
  units: graphs.steps,
  call: async () => {
    executions.count = 0;
    const r = await graphs.waymark();
    check(r.status === 'succeeded', `waymark ${shape} ended ${r.status}`);
    check(done(r.state), `waymark ${shape} ended with ${JSON.stringify(r.state)}`);
    check(executions.count === graphs.steps, `waymark ${shape} ran ${executions.count} nodes`);
    // Durable: the stored run says it succeeded, after the start and one commit per step.
    const stored = await store.getRun(r.runId);
    check(
      stored?.status === 'succeeded' && stored.seq === graphs.steps + 1,
      `waymark ${shape} stored ${stored?.status} at seq ${stored?.seq}`,
    );
    return undefined;
  },
};

const langgraph: Contender = {
  name: 'LangGraph.js',
  units: graphs.steps,
  call: async () => {
    executions.count = 0;
    const thread_id = `thread-${++threads}`;
    const out = await graphs.langgraph(thread_id);
    check(done(out), `LangGraph.js ${shape} ended with ${JSON.stringify(out)}`);
    check(executions.count === graphs.steps, `LangGraph.js ${shape} ran ${executions.count} nodes`);
    // Durable: the latest checkpoint of the thread holds the final state.
    const latest = await saver.getTuple({ configurable: { thread_id } });
    const values = latest?.checkpoint.channel_values as Record<string, unknown> | undefined;
    check(done(values), `LangGraph.js ${shape} checkpointed ${JSON.stringify(values)}`);
    return undefined;
  },
};

// The floor: one bare better-sqlite3 INSERT commit of an event-sized row on the same disk, in the
// same mode, alternating with the engines. A durable step can cost no less; on a shared machine
// it moves with the disk, so it is measured here rather than quoted.
const floor = commitFloor(join(dir, 'floor.db'), 100);

const base = settingsFromEnv();
// One LangGraph.js call of the loop takes 2-4 s here (2,000 checkpoints), and a repetition is at
// least one call: 7 repetitions (the least BENCHMARKS.md allows) keep the scenario under a minute.
const settings = shape === 'loop' ? { ...base, reps: Math.min(base.reps, 7) } : base;
progress(
  `sqlite ${shape}: warm-up ${settings.warmupMs} ms, ${settings.reps} repetitions of ~${settings.repMs} ms each`,
);
const [wmResult, lgResult, floorResult] = await compare([waymark, langgraph, floor.contender], {
  settings,
  // LangGraph.js needs ~2,000 node executions before V8 settles (BENCHMARKS.md).
  minWarmUnits: 3000,
  scale: 1000,
});
const ratio = pairedRatio(lgResult!, wmResult!).median;
// Per repetition: waymark's step minus one bare commit measured right next to it.
const above = stat(wmResult!.values.map((v, i) => v - floorResult!.values[i]!));
const wmMode = store.settings();
const lgMode = modeOf(saver.db);
await store.close();
saver.db.close();
floor.close();

emit({
  scenario: 'sqlite',
  title: `${graphs.title}, SQLite`,
  waymarkOrigin,
  peerName: 'LangGraph.js',
  rows: [
    {
      measure: `${graphs.title}, SQLite, per node step`,
      unit: 'us',
      waymark: wmResult!.perUnit,
      peer: lgResult!.perUnit,
      ratio,
      target: `>= ${targetRatio}x`,
      met: ratio >= targetRatio,
    },
    {
      measure: '  floor: one bare SQLite commit, same disk',
      unit: 'us',
      waymark: floorResult!.perUnit,
    },
    { measure: '  waymark step above that commit', unit: 'us', waymark: above },
  ],
  notes: [
    `sqlite ${shape}: waymark SqliteStore ${wmMode.journalMode}/synchronous=${wmMode.synchronous}, ${graphs.steps + 1} commits per run (start + one per step), snapshot every 100; LangGraph.js SqliteSaver ${lgMode.journalMode}/synchronous=${lgMode.synchronous}, durability "async" (its default), a thread per run; ${settings.reps} repetitions.`,
  ],
  details: {
    settings,
    waymark: wmResult,
    langgraph: lgResult,
    floor: floorResult,
    sqlite: { waymark: wmMode, langgraph: lgMode },
  },
});
