// Throughput of no-op activations with 1, 2 and 4 waymark worker processes, against pg-boss
// processing as many no-op jobs with as many worker processes, on the same server in the same
// run. Per worker count: one fresh schema for waymark, one for pg-boss, their workers started
// and warm before any timing; the side not being timed is paused (SIGSTOP), so its idle polling
// costs the other nothing. Each repetition starts from empty tables and counts from the first
// enqueue to the last run (job) that succeeded, by the commit times the database holds.

import PgBoss from 'pg-boss';
import type { PostgresStore } from '../../../src/postgres.js';
import { check, countsFromEnv, progress, type Stat, stat } from '../measure.js';
import { inSchema, pgUrl, sleep } from '../pg.js';
import type { Row } from '../report.js';
import { type Alternating, alternate } from './alternate.js';
import {
  type Child,
  cpuMeter,
  startPgBossWorkers,
  startWaymarkWorkers,
  statements,
  stopAll,
} from './children.js';
import { type PartReport, versionOf, type WorkerBench } from './context.js';
import { type BenchGraph, chainLength } from './graphs.mjs';

/** Calls in flight at once from the producer, on either side. */
const producers = 8;
/** Jobs pg-boss fetches and completes per call: waymark's default concurrency per worker. */
const bossBatch = 8;
/** Jobs per pg-boss insert() call of the producer, and runs per waymark enqueueAll() call. */
const chunk = 100;
/** How long an idle pg-boss worker waits before it fetches again. */
const bossIdleMs = 20;

interface Rep {
  /** Activations (or jobs) per second, first enqueue to last success. */
  readonly rate: number;
  readonly ms: number;
  /** When the producer had enqueued the last unit, from the first enqueue. */
  readonly producerMs: number;
  /** Statements the workers' pools ran, per activation (or job). */
  readonly statementsPerUnit: number;
  /** CPU time (us) the worker processes used, per activation (or job). */
  readonly workerCpuUs: number;
  /**
   * CPU time (us) the rest of the machine used, per activation (or job): mostly PostgreSQL,
   * with the producer's statements; the bench's own process is left out.
   */
  readonly restCpuUs: number;
}

type Side = Alternating<Rep> & { readonly name: string };

/** Runs `body(i)` for i < count, at most `parallel` at once. */
async function pooled(count: number, parallel: number, body: (i: number) => Promise<unknown>) {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(parallel, count) }, async () => {
      while (next < count) await body(next++);
    }),
  );
}

/** Polls `read` until it reports `expected` successes; returns the last success's time (ms). */
async function finished(
  read: () => Promise<{ ok: number; bad: number; last: number | null }>,
  expected: number,
  what: string,
): Promise<number> {
  const until = Date.now() + 300_000;
  for (;;) {
    const { ok, bad, last } = await read();
    check(bad === 0, `${what}: ${bad} ended other than succeeded`);
    if (ok === expected && last !== null) return last;
    check(Date.now() < until, `${what}: only ${ok} of ${expected} succeeded after 300 s`);
    await sleep(50);
  }
}

function waymarkSide(
  bench: WorkerBench,
  store: PostgresStore,
  children: readonly Child[],
  graph: BenchGraph,
  runs: number,
  perRun: number,
): Side {
  const s = `"${store.schema}"`;
  return {
    name: `waymark ${graph.name}`,
    children,
    async rep(label) {
      await bench.admin.query(
        `TRUNCATE ${['runs', 'events', 'snapshots', 'effects', 'waits', 'timers', 'memos', 'tasks', 'inbox'].map((t) => `${s}.${t}`).join(', ')}`,
      );
      const before = await statements(children);
      const cpu = cpuMeter(children);
      const t0 = Date.now();
      // Batches of runs, as pg-boss gets batches of jobs: enqueueAll() records a chunk in one
      // statement and wakes the workers once. A build from before it had enqueueAll enqueues
      // one run per call (a run and a wake-up each).
      const enqueueAll = bench.wm.enqueueAll;
      if (enqueueAll !== undefined) {
        const chunks = Math.ceil(runs / chunk);
        await pooled(chunks, producers, (c) => {
          const ids = Array.from(
            { length: Math.min(chunk, runs - c * chunk) },
            (_, k) => `${label}-${c * chunk + k}`,
          );
          return enqueueAll(
            store,
            graph,
            ids.map(() => ({})),
            { runIds: ids },
          );
        });
      } else {
        await pooled(runs, producers, (i) =>
          bench.wm.enqueue(store, graph, {}, { runId: `${label}-${i}` }),
        );
      }
      const producerMs = Date.now() - t0;
      const last = await finished(
        async () => {
          const { rows } = await bench.admin.query(
            `SELECT count(*) FILTER (WHERE status = 'succeeded')::int AS ok,
              count(*) FILTER (WHERE status NOT IN ('running', 'succeeded'))::int AS bad,
              max(updated_at) AS last FROM ${s}.runs`,
          );
          return rows[0];
        },
        runs,
        `${graph.name} ${label}`,
      );
      const used = cpu(runs * perRun);
      const after = await statements(children);
      const { rows } = await bench.admin.query(
        `SELECT count(*)::int AS n FROM ${s}.events WHERE event::jsonb ->> 'type' = 'completed'`,
      );
      const activations = runs * perRun;
      check(rows[0].n === activations, `${graph.name} ${label}: ${rows[0].n} completions`);
      const ms = last - t0;
      return {
        rate: (activations / ms) * 1000,
        ms,
        producerMs,
        statementsPerUnit: (after - before) / activations,
        ...used,
      };
    },
  };
}

function bossSide(
  bench: WorkerBench,
  boss: PgBoss,
  schema: string,
  queue: string,
  children: readonly Child[],
  jobs: number,
): Side {
  return {
    name: 'pg-boss',
    children,
    async rep(label) {
      await bench.admin.query(`TRUNCATE "${schema}".job`);
      const before = await statements(children);
      const cpu = cpuMeter(children);
      const t0 = Date.now();
      // Bulk inserts: with send(), one job per call, the producer alone stays near 1,000 jobs/s
      // here and would be what is measured; pg-boss's consumers are what is compared.
      const chunks = Math.ceil(jobs / chunk);
      await pooled(chunks, producers, (c) =>
        boss.insert(
          Array.from({ length: Math.min(chunk, jobs - c * chunk) }, (_, k) => ({
            name: queue,
            data: { label, i: c * chunk + k },
          })),
        ),
      );
      const producerMs = Date.now() - t0;
      const last = await finished(
        async () => {
          const { rows } = await bench.admin.query(
            `SELECT count(*) FILTER (WHERE state = 'completed')::int AS ok,
              count(*) FILTER (WHERE state IN ('failed', 'cancelled'))::int AS bad,
              (extract(epoch FROM max(completed_on)) * 1000)::float8 AS last
            FROM "${schema}".job WHERE name = $1`,
            [queue],
          );
          return rows[0];
        },
        jobs,
        `pg-boss ${label}`,
      );
      const used = cpu(jobs);
      const after = await statements(children);
      const ms = last - t0;
      return {
        rate: (jobs / ms) * 1000,
        ms,
        producerMs,
        statementsPerUnit: (after - before) / jobs,
        ...used,
      };
    },
  };
}

/** 1, 2 and 4, or those BENCH_THROUGHPUT_WORKERS lists (`4`, `1,4`) for a shorter run. */
const workerCounts = () => countsFromEnv('BENCH_THROUGHPUT_WORKERS', [1, 2, 4]);

export async function throughput(bench: WorkerBench): Promise<PartReport> {
  const jobs = bench.quick ? 300 : 2_000;
  const reps = Math.min(bench.settings.reps, 7);
  const rows: Row[] = [];
  const details: Record<string, unknown> = {};
  for (const workers of workerCounts()) {
    progress(
      `workers throughput: ${workers} worker process(es), ${jobs} units, ${reps} repetitions`,
    );
    const results = await inSchema(bench.admin, 'tp', (wmSchema) =>
      inSchema(bench.admin, 'boss', async (bossSchema) => {
        const store = await bench.store(wmSchema);
        const boss = new PgBoss({
          connectionString: pgUrl,
          schema: bossSchema,
          max: producers,
          supervise: false,
          schedule: false,
        });
        boss.on('error', () => {});
        await boss.start();
        const queue = 'noop';
        await boss.createQueue(queue);
        const wmChildren = await startWaymarkWorkers(store, bench.build, workers);
        const bossChildren = await startPgBossWorkers(
          bossSchema,
          queue,
          workers,
          bossBatch,
          bossIdleMs,
        );
        try {
          const sides = [
            waymarkSide(bench, store, wmChildren, bench.graphs.one, jobs, 1),
            waymarkSide(
              bench,
              store,
              wmChildren,
              bench.graphs.chain10,
              jobs / chainLength,
              chainLength,
            ),
            bossSide(bench, boss, bossSchema, queue, bossChildren, jobs),
          ];
          return await alternate(sides, bench.settings.warmupMs, reps);
        } finally {
          await stopAll([...wmChildren, ...bossChildren]);
          await boss.stop({ graceful: false, wait: true });
          await store.close();
        }
      }),
    );
    const summaries: Summary[] = results.map((reps) => ({
      rate: stat(reps.map((r) => r.rate)),
      values: reps.map((r) => r.rate),
      ms: stat(reps.map((r) => r.ms)),
      producerMs: stat(reps.map((r) => r.producerMs)),
      statementsPerUnit: stat(reps.map((r) => r.statementsPerUnit)),
      workerCpuUs: stat(reps.map((r) => r.workerCpuUs)),
      restCpuUs: stat(reps.map((r) => r.restCpuUs)),
    }));
    const [one, chain, pgboss] = summaries as [Summary, Summary, Summary];
    const label = `${workers} worker${workers === 1 ? '' : 's'}`;
    for (const [what, side] of [
      [`throughput, ${label}: 1-node runs (act/s) vs pg-boss jobs/s`, one],
      [`throughput, ${label}: 10-node chains (act/s) vs pg-boss jobs/s`, chain],
    ] as const) {
      const ratio = stat(side.values.map((v, i) => v / pgboss.values[i]!)).median;
      rows.push({
        measure: what,
        unit: '/s',
        waymark: side.rate,
        peer: pgboss.rate,
        ratio,
        target: '>= pg-boss',
        met: ratio >= 1,
      });
    }
    details[`workers${workers}`] = { one, chain, pgboss };
  }
  const counts = workerCounts();
  const median = (w: number, k: 'one' | 'chain' | 'pgboss', m: keyof Summary) =>
    ((details[`workers${w}`] as Record<string, Summary>)[k]![m] as Stat).median;
  const each = (k: 'one' | 'chain' | 'pgboss', m: keyof Summary, digits: number) =>
    counts.map((w) => median(w, k, m).toFixed(digits)).join('/');
  const perSide = (m: keyof Summary, digits: number) =>
    `1-node runs ${each('one', m, digits)}, chains ${each('chain', m, digits)}, pg-boss ${each('pgboss', m, digits)}`;
  const at = `at ${counts.join('/')} workers`;
  return {
    title: 'no-op throughput: waymark workers vs pg-boss',
    peerName: 'pg-boss',
    rows,
    notes: [
      `throughput: ${jobs} units per repetition (${jobs} 1-node runs, ${jobs / chainLength} runs of a ${chainLength}-node chain, ${jobs} pg-boss jobs), ${reps} repetitions after a warm-up of >= ${bench.settings.warmupMs / 1000} s, each from empty tables; ratio = waymark act/s / pg-boss jobs/s, paired by repetition. Every waymark activation also commits its checkpoint (event) before the next is scheduled; a pg-boss job is a row updated twice.`,
      `throughput: waymark workers at their defaults (concurrency 8, folds 8, lease 10 s, poll 1 s, NOTIFY on, pool 10); the producer calls enqueueAll() with ${chunk} runs, ${producers} calls at a time (each one statement and one wake-up). pg-boss ${versionOf('pg-boss')}: a loop of fetch(batchSize ${bossBatch}) + complete(ids) per process (its work() waits >= 0.5 s after every batch), ${bossIdleMs} ms sleep only when a fetch is empty, 4 connections per process; the producer calls insert() with ${chunk} jobs, ${producers} calls at a time (with send(), one job per call, its producer alone made ~1,000 jobs/s here and bounded the measurement).`,
      `throughput: statements per unit (worker pools, median) ${at}: ${perSide('statementsPerUnit', 1)}; producer done after (ms) ${perSide('producerMs', 0)}.`,
      `throughput: CPU per unit (us, median) ${at}, in the worker processes: ${perSide('workerCpuUs', 0)}; in the rest of the machine (PostgreSQL, with the producer's statements): ${perSide('restCpuUs', 0)}.`,
    ],
    details,
  };
}

interface Summary {
  readonly rate: Stat;
  readonly values: readonly number[];
  readonly ms: Stat;
  readonly producerMs: Stat;
  readonly statementsPerUnit: Stat;
  readonly workerCpuUs: Stat;
  readonly restCpuUs: Stat;
}
