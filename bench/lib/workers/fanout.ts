// A 100-way fan-out of 50 ms nodes (a map whose branches are all dispatched at once), wall time
// from enqueue to the run's success with 1 worker process vs 4, at a per-worker concurrency that
// keeps one worker from running all 100 at once. Each worker count has its own schema and its
// workers; the two alternate, the one not timed paused.

import { availableParallelism } from 'node:os';
import type { PostgresStore } from '../../../src/postgres.js';
import { check, countsFromEnv, numberFromEnv, progress, stat } from '../measure.js';
import { inSchema, sleep } from '../pg.js';
import type { Row } from '../report.js';
import { type Alternating, alternate } from './alternate.js';
import { type Child, cpuMeter, startWaymarkWorkers, stopAll } from './children.js';
import type { PartReport, WorkerBench } from './context.js';
import { fanNodeMs, fanWidth } from './graphs.mjs';

interface FanRep {
  /** Enqueue -> run succeeded. */
  readonly ms: number;
  /** Enqueue -> the first branch's body starts. */
  readonly headMs: number;
  /** The last branch's body ends -> run succeeded: folding what is left, the join, the end. */
  readonly tailMs: number;
  /** CPU time of the side's worker processes, enqueue -> success, in ms. */
  readonly workerCpuMs: number;
  /** CPU time of the rest of the machine meanwhile (PostgreSQL; this process left out), in ms. */
  readonly restCpuMs: number;
}

/**
 * Per-worker concurrencies measured: 4 x 25 = 100 holds every branch at once; 4 x 5 does not;
 * at 1, each worker runs one branch at a time (a worker per slot, as one-job-at-a-time queues
 * are deployed).
 */
const allConcurrencies = [25, 5, 1];
const target = 3.5;

/**
 * How long each side first works alone (BENCH_FANOUT_WARMUP_MS; none in a --quick run). Each of
 * 4 workers runs a quarter of the branches and folds a quarter of the runs, so its processes
 * settle more slowly than one worker's: after the shared 3 s, 4 workers used twice the CPU
 * per fan-out of 4 that had worked alone for 30 s (57 vs 29 ms) and took 96 ms against 82, in
 * one run; a long-lived worker pays that once.
 */
function aloneMs(bench: WorkerBench): number {
  return bench.quick ? 0 : numberFromEnv('BENCH_FANOUT_WARMUP_MS', 30_000);
}

function side(bench: WorkerBench, store: PostgresStore, children: readonly Child[]) {
  const graph = bench.graphs.fan100;
  return {
    children,
    async rep(label: string): Promise<FanRep> {
      const runId = `${label}`;
      const cpu = cpuMeter(children);
      const t0 = Date.now();
      await bench.wm.enqueue(store, graph, {}, { runId });
      const until = t0 + 60_000;
      for (;;) {
        const run = await store.getRun(runId);
        if (run?.status === 'succeeded') {
          const used = cpu(1);
          const view = await bench.wm.inspect(store, graph, runId);
          const out = view.snapshot.state.out;
          check(
            out.length === fanWidth && out.every((v, i) => v === i),
            `fan-out ${label} ended with ${out.length} items`,
          );
          // Where the time went, by the trace's own times (the workers' clocks: this machine's).
          const branches = view.trace.entries.filter((e) => e.node === 'work');
          const firstStart = Math.min(...branches.map((e) => e.startedAt));
          const lastEnd = Math.max(...branches.map((e) => e.startedAt + e.durationMs));
          return {
            ms: run.updatedAt - t0,
            headMs: firstStart - t0,
            tailMs: run.updatedAt - lastEnd,
            workerCpuMs: used.workerCpuUs / 1000,
            restCpuMs: used.restCpuUs / 1000,
          };
        }
        check(run?.status === 'running', `fan-out ${label} ended ${run?.status}`);
        check(Date.now() < until, `fan-out ${label} still running after 60 s`);
        await sleep(5);
      }
    },
  } satisfies Alternating<FanRep>;
}

export async function fanout(bench: WorkerBench): Promise<PartReport> {
  const reps = bench.settings.reps;
  const rows: Row[] = [];
  const details: Record<string, unknown> = {};
  const tails: string[] = [];
  // Or those BENCH_FANOUT_CONCURRENCY lists (`5`, `25,5`), for a shorter run.
  const concurrencies = countsFromEnv('BENCH_FANOUT_CONCURRENCY', allConcurrencies);
  for (const concurrency of concurrencies) {
    progress(
      `workers fanout: concurrency ${concurrency} per worker, 1 vs 4 workers, ${reps} repetitions`,
    );
    const [oneReps, fourReps] = await inSchema(bench.admin, 'fan1', (schema1) =>
      inSchema(bench.admin, 'fan4', async (schema4) => {
        const store1 = await bench.store(schema1);
        const store4 = await bench.store(schema4);
        const children1 = await startWaymarkWorkers(store1, bench.build, 1, { concurrency });
        const children4 = await startWaymarkWorkers(store4, bench.build, 4, { concurrency });
        try {
          return await alternate(
            [side(bench, store1, children1), side(bench, store4, children4)],
            bench.settings.warmupMs,
            reps,
            aloneMs(bench),
          );
        } finally {
          await stopAll([...children1, ...children4]);
          await store1.close();
          await store4.close();
        }
      }),
    );
    const one = oneReps!.map((r) => r.ms);
    const four = fourReps!.map((r) => r.ms);
    const speedup = stat(one.map((ms, i) => ms / four[i]!));
    const mean = (values: readonly number[]) => values.reduce((a, b) => a + b, 0) / values.length;
    const parts = (reps: readonly FanRep[]) =>
      `enqueue -> first branch ${Math.round(stat(reps.map((r) => r.headMs)).median)} ms, last branch end -> succeeded ${Math.round(stat(reps.map((r) => r.tailMs)).median)} ms, CPU ${Math.round(mean(reps.map((r) => r.workerCpuMs)))} ms in the workers + ${Math.round(mean(reps.map((r) => r.restCpuMs)))} ms in the rest of the machine`;
    tails.push(
      `fan-out, concurrency ${concurrency}/worker, medians (CPU: means, as /proc counts it in 10 ms ticks per process): 1 worker ${parts(oneReps!)}; 4 workers ${parts(fourReps!)}; ${availableParallelism()} cores.`,
    );
    const at = `concurrency ${concurrency}/worker`;
    rows.push(
      {
        measure: `fan-out 100 x ${fanNodeMs} ms, ${at}: 1 worker`,
        unit: 'ms',
        waymark: stat(one),
      },
      {
        measure: `fan-out 100 x ${fanNodeMs} ms, ${at}: 4 workers`,
        unit: 'ms',
        waymark: stat(four),
      },
      {
        measure: `fan-out 100 x ${fanNodeMs} ms, ${at}: 4 workers faster by`,
        unit: 'x',
        text: `${speedup.median.toFixed(2)}x (${speedup.min.toFixed(2)}-${speedup.max.toFixed(2)})`,
        target: `>= ${target}x`,
        met: speedup.median >= target,
      },
    );
    details[`concurrency${concurrency}`] = { one: oneReps, four: fourReps, speedup };
  }
  const ideal = (c: number) => Math.ceil(fanWidth / c) * fanNodeMs;
  return {
    title: '100-way fan-out of 50 ms nodes: 1 vs 4 workers',
    rows,
    notes: [
      `fan-out: enqueue -> run succeeded (its final commit's time), a map of ${fanWidth} branches of ${fanNodeMs} ms with map concurrency ${fanWidth}; per-worker concurrency ${concurrencies.join(' and ')} (node time alone: ${concurrencies.map((c) => `${ideal(c)} ms vs ${ideal(c * 4)} ms`).join(', ')}, i.e. 4x at most); workers otherwise at their defaults; each side first warmed alone for ${aloneMs(bench) / 1000} s, then ${bench.settings.warmupMs / 1000} s alternating; ${reps} repetitions, speed-up paired by repetition.`,
      ...tails,
    ],
    details,
  };
}
