// What one durable step costs on PostgreSQL, in process: `run()` of a 100-node chain over
// PostgresStore (one commit per step, before the next node starts), against the floor, a bare
// one-row INSERT commit round trip to the same server through the same driver, and against
// LangGraph.js's PostgresSaver on the same chain. Contenders alternate in one process
// (bench/lib/measure.ts compare()), each in a fresh schema of its own.

import { PostgresSaver } from '@langchain/langgraph-checkpoint-postgres';
import pg from 'pg';
import { executions, langgraphChainBuilder, stepLimit, waymarkChain } from '../graphs.js';
import { type Contender, check, compare, pairedRatio, progress, stat } from '../measure.js';
import { inSchema, pgUrl } from '../pg.js';
import { type PartReport, versionOf, type WorkerBench } from './context.js';

const size = 100;

export async function stepCost(bench: WorkerBench): Promise<PartReport> {
  return inSchema(bench.admin, 'step', (wmSchema) =>
    inSchema(bench.admin, 'lg', (lgSchema) =>
      inSchema(bench.admin, 'floor', async (floorSchema) => {
        const store = await bench.store(wmSchema, { poolSize: 2 });
        await bench.admin.query(`CREATE SCHEMA "${lgSchema}"`);
        const saver = PostgresSaver.fromConnString(pgUrl, { schema: lgSchema });
        await saver.setup();
        await bench.admin.query(`CREATE SCHEMA "${floorSchema}"`);
        await bench.admin.query(`CREATE TABLE "${floorSchema}".floor (
          run_id text COLLATE "C" NOT NULL, seq bigint NOT NULL, at double precision NOT NULL,
          event text NOT NULL, PRIMARY KEY (run_id, seq))`);
        const floorPool = new pg.Pool({ connectionString: pgUrl, max: 1 });
        floorPool.on('error', () => {});
        try {
          return await measure(bench, store, saver, floorPool, floorSchema);
        } finally {
          await store.close();
          await saver.end();
          await floorPool.end();
        }
      }),
    ),
  );
}

async function measure(
  bench: WorkerBench,
  store: Awaited<ReturnType<WorkerBench['store']>>,
  saver: PostgresSaver,
  floorPool: pg.Pool,
  floorSchema: string,
): Promise<PartReport> {
  const wmGraph = waymarkChain(size);
  const lgGraph = langgraphChainBuilder(size).compile({ checkpointer: saver });
  let threads = 0;
  const waymark: Contender = {
    name: 'waymark PostgresStore',
    units: size,
    call: async () => {
      executions.count = 0;
      const r = await bench.wm.run(wmGraph, { counter: 0 }, { store, maxSteps: stepLimit });
      check(r.state.counter === size, `waymark chain ended with ${JSON.stringify(r.state)}`);
      check(executions.count === size, `waymark chain ran ${executions.count} nodes`);
      const stored = await store.getRun(r.runId);
      check(
        stored?.status === 'succeeded' && stored.seq === size + 1,
        `waymark chain stored ${stored?.status} at seq ${stored?.seq}`,
      );
      return undefined;
    },
  };
  const langgraph = (durability: 'async' | 'sync'): Contender => ({
    name: `LangGraph.js PostgresSaver (${durability})`,
    units: size,
    call: async () => {
      executions.count = 0;
      const thread_id = `thread-${++threads}`;
      const out = (await lgGraph.invoke(
        { counter: 0 },
        { configurable: { thread_id }, recursionLimit: stepLimit, durability },
      )) as { counter: number };
      check(out.counter === size, `LangGraph.js chain ended with ${JSON.stringify(out)}`);
      check(executions.count === size, `LangGraph.js chain ran ${executions.count} nodes`);
      const latest = await saver.getTuple({ configurable: { thread_id } });
      const values = latest?.checkpoint.channel_values as { counter?: number } | undefined;
      check(values?.counter === size, `LangGraph.js checkpointed ${JSON.stringify(values)}`);
      return undefined;
    },
  });
  let floorRuns = 0;
  const floor: Contender = {
    name: 'one bare INSERT commit',
    units: size,
    call: async () => {
      const runId = `floor-${++floorRuns}`;
      for (let seq = 1; seq <= size; seq++) {
        await floorPool.query({
          name: 'bench_floor',
          text: `INSERT INTO "${floorSchema}".floor (run_id, seq, at, event) VALUES ($1, $2, $3, $4)`,
          values: [
            runId,
            seq,
            Date.now(),
            `{"type":"completed","activation":"n${seq}:1","update":{"counter":${seq}}}`,
          ],
        });
      }
      return undefined;
    },
  };
  const settings = bench.settings;
  progress(
    `workers step: warm-up ${settings.warmupMs} ms, ${settings.reps} repetitions of ~${settings.repMs} ms each`,
  );
  const [wm, lgAsync, lgSync, bare] = await compare(
    [waymark, langgraph('async'), langgraph('sync'), floor],
    // LangGraph.js needs ~2,000 node executions before V8 settles (BENCHMARKS.md).
    { settings, minWarmUnits: 3000, scale: 1000 },
  );
  const ratio = pairedRatio(lgAsync!, wm!).median;
  const above = stat(wm!.values.map((v, i) => v - bare!.values[i]!));
  return {
    title: `${size}-node chain persisted to PostgreSQL, in process`,
    peerName: 'PostgresSaver',
    rows: [
      {
        measure: `${size}-node chain, PostgreSQL, per step (peer: PostgresSaver)`,
        unit: 'us',
        waymark: wm!.perUnit,
        peer: lgAsync!.perUnit,
        ratio,
      },
      {
        measure: '  PostgresSaver with durability "sync"',
        unit: 'us',
        peer: lgSync!.perUnit,
        ratio: pairedRatio(lgSync!, wm!).median,
      },
      {
        measure: '  floor: one bare INSERT commit, same server',
        unit: 'us',
        waymark: bare!.perUnit,
      },
      { measure: '  waymark step above that commit', unit: 'us', waymark: above },
    ],
    notes: [
      `step: run() over PostgresStore (pool of 2; one commit per step before the next node, ${size + 1} per run), @langchain/langgraph-checkpoint-postgres ${versionOf('@langchain/langgraph-checkpoint-postgres')} PostgresSaver with its default durability "async" (its writes overlap the next step) and with "sync", a thread per run; floor: a prepared one-row INSERT, autocommit, one connection. ${settings.reps} repetitions, ratio = PostgresSaver / waymark per step, paired by repetition.`,
    ],
    details: { waymark: wm, langgraphAsync: lgAsync, langgraphSync: lgSync, floor: bare },
  };
}
