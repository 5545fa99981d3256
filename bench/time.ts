// Time on PostgreSQL with real worker processes: what sleeping runs cost, and how late they wake.
// bench/run.ts starts one fresh process per part:
//
//   node --import tsx bench/time.ts asleep   a worker's empty claim with 0, 1,000 and 10,000 runs
//                                            asleep, and the statements an idle worker runs per poll
//   node --import tsx bench/time.ts wake     1,000 runs due in the same second: how late each node
//                                            after the sleep starts, on 1 and on 2 workers
//   node --import tsx bench/time.ts signal   signal() -> start of the node after the event, on a
//                                            worker woken by NOTIFY
//   node --import tsx bench/time.ts rate     more calls than a rate limit allows, on 2 workers:
//                                            the calls over the limit in any minute (goal 0)
//
// Run them: npm run bench -- time (needs PostgreSQL: WAYMARK_PG_URL). Each measurement works in
// a fresh schema and drops it. Printed, never asserted.

import { loadavg } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { WorkQueue } from '../src/store/work-queue.js';
import { check, progress, stat } from './lib/measure.js';
import { inSchema, percentile, serverInfo, sleep } from './lib/pg.js';
import { emit, type Row } from './lib/report.js';
import { tempDir } from './lib/sqlite.js';
import { loadWaymarkSqlite, waymarkOrigin } from './lib/waymark.js';
import { type Child, startWaymarkWorkers, statements, stopAll } from './lib/workers/children.js';
import { type PartReport, type WorkerBench, workerBench } from './lib/workers/context.js';
import type { NapGraph } from './lib/workers/graphs.mjs';

const day = 86_400_000;

function napGraph(bench: WorkerBench): NapGraph {
  const nap = bench.graphs.nap;
  check(nap !== undefined, 'this build of waymark has no sleep(): measure a build that has it');
  return nap;
}

/** Resolves once every one of `runIds` has a timer row: each run is asleep. */
async function allAsleep(bench: WorkerBench, schema: string, count: number): Promise<void> {
  const until = Date.now() + 600_000;
  for (;;) {
    const { rows } = await bench.admin.query(`SELECT count(*)::int AS n FROM "${schema}".timers`);
    if (rows[0].n >= count) return;
    check(Date.now() < until, `only ${rows[0].n} of ${count} runs fell asleep in 10 minutes`);
    await sleep(200);
  }
}

/** Puts `count` runs to sleep for a day, through one worker, which stops afterwards. */
async function sleepers(bench: WorkerBench, schema: string, count: number): Promise<void> {
  if (count === 0) return;
  const store = await bench.store(schema);
  const nap = napGraph(bench);
  const wakeAt = Date.now() + day;
  const worker = await startWaymarkWorkers(store, bench.build, 1, { concurrency: 64 });
  try {
    for (let i = 0; i < count; i += 1_000) {
      const inputs = Array.from({ length: Math.min(1_000, count - i) }, () => ({ wakeAt }));
      await bench.wm.enqueueAll(store, nap, inputs);
    }
    await allAsleep(bench, schema, count);
  } finally {
    await stopAll(worker);
    await store.close();
  }
}

/**
 * Times a worker's claim of the nap graph's runs when none is due, after a warm-up by time: the
 * statement every idle worker runs on every poll.
 */
async function emptyClaims(
  bench: WorkerBench,
  store: Pick<WorkQueue, 'claimAndLoadRuns'>,
): Promise<number[]> {
  const nap = napGraph(bench);
  const claim = {
    owner: 'bench',
    host: 'bench',
    pid: process.pid,
    leaseMs: 10_000,
    graphs: [{ name: nap.name, hash: nap.hash }],
    limit: 8,
  };
  const times: number[] = [];
  const until = performance.now() + bench.settings.warmupMs;
  while (performance.now() < until) await store.claimAndLoadRuns(claim);
  for (let i = 0; i < (bench.quick ? 20 : 200); i++) {
    const started = performance.now();
    const claimed = await store.claimAndLoadRuns(claim);
    times.push(performance.now() - started);
    check(claimed.length === 0, `a claim took ${claimed.length} runs that are not due`);
  }
  return times;
}

/**
 * A worker's claim when nothing is due, timed from this process: the statement every idle worker
 * runs on every poll. Sleeping runs must not make it slower (one indexed query for what is due,
 * never a look at each sleeping run).
 */
async function asleep(bench: WorkerBench): Promise<PartReport> {
  const counts = bench.quick ? [0, 1_000] : [0, 1_000, 10_000];
  const rows: Row[] = [];
  const details: Record<string, unknown> = {};
  const notes: string[] = [];
  for (const count of counts) {
    await inSchema(bench.admin, 'asleep', async (schema) => {
      progress(`asleep: ${count} sleeping runs`);
      const store = await bench.store(schema);
      await sleepers(bench, schema, count);
      await bench.admin.query(`ANALYZE "${schema}".runs, "${schema}".timers`);
      const times = await emptyClaims(bench, store);
      // What one idle worker runs per poll with these runs asleep (a short poll, to count many).
      const pollMs = 100;
      const [worker] = (await startWaymarkWorkers(store, bench.build, 1, {
        pollMs,
      })) as [Child];
      await sleep(1_000);
      const before = await statements([worker]);
      const windowMs = bench.quick ? 2_000 : 5_000;
      await sleep(windowMs);
      const after = await statements([worker]);
      await stopAll([worker]);
      await store.close();
      const perPoll = ((after - before) / windowMs) * pollMs;
      const s = stat(times);
      rows.push({
        measure: `empty claim, ${count.toLocaleString('en-US')} runs asleep`,
        unit: 'ms',
        waymark: s,
        ...(count > 0 && { target: 'as with 0 asleep' }),
      });
      rows.push({
        measure: `idle worker, ${count.toLocaleString('en-US')} asleep`,
        unit: '',
        text: `${perPoll.toFixed(1)} statements per ${pollMs} ms poll`,
      });
      details[String(count)] = { claimMs: times, statementsPerPoll: perPoll };
    });
  }
  // The same claim on SQLite (`waymark worker` on a file), the runs put to sleep in process.
  const { SqliteStore } = await loadWaymarkSqlite();
  const dir = tempDir('asleep');
  for (const count of counts) {
    progress(`asleep: ${count} sleeping runs, SQLite`);
    const store = new SqliteStore(join(dir, `asleep-${count}.db`));
    const nap = napGraph(bench);
    const wakeAt = Date.now() + day;
    for (let i = 0; i < count; i++) await bench.wm.run(nap, { wakeAt }, { store });
    const times = await emptyClaims(bench, store);
    await store.close();
    rows.push({
      measure: `SQLite empty claim, ${count.toLocaleString('en-US')} runs asleep`,
      unit: 'ms',
      waymark: stat(times),
      ...(count > 0 && { target: 'as with 0 asleep' }),
    });
    details[`sqlite ${count}`] = { claimMs: times };
  }
  notes.push(
    'empty claim: claimAndLoadRuns with nothing due, from this process, after a warm-up by time; the idle worker is a real process polling every 100 ms (statements counted at its pool)',
  );
  return { title: 'sleeping runs: the cost of what is not due', rows, notes, details };
}

/** 1,000 runs due in the same second: how late the node after each one's sleep starts. */
async function wake(bench: WorkerBench): Promise<PartReport> {
  const count = bench.quick ? 200 : 1_000;
  const rows: Row[] = [];
  const details: Record<string, unknown> = {};
  for (const workers of [1, 2]) {
    await inSchema(bench.admin, 'wake', async (schema) => {
      progress(`wake: ${count} runs, ${workers} worker(s)`);
      const store = await bench.store(schema);
      const nap = napGraph(bench);
      const children = await startWaymarkWorkers(store, bench.build, workers);
      const late = new Map<string, number>();
      for (const child of children) {
        child.onLine((line) => {
          const [what, runId, ms] = line.split(' ');
          if (what === 'woke') late.set(runId!, Number(ms));
        });
      }
      // Far enough ahead that every run is asleep before it is due: they fall asleep first.
      const wakeAt = Math.ceil((Date.now() + 20_000) / 1_000) * 1_000;
      const inputs = Array.from({ length: count }, (_, i) => ({ wakeAt: wakeAt + (i % 1_000) }));
      await bench.wm.enqueueAll(store, nap, inputs);
      await allAsleep(bench, schema, count);
      check(Date.now() < wakeAt, 'the runs fell asleep after they were due: raise the lead time');
      const until = wakeAt + 120_000;
      while (late.size < count) {
        check(Date.now() < until, `only ${late.size} of ${count} runs woke in 2 minutes`);
        await sleep(100);
      }
      await stopAll(children);
      await store.close();
      const ms = [...late.values()];
      const label = `${workers} worker${workers > 1 ? 's' : ''}`;
      rows.push({
        measure: `wake lateness, ${count.toLocaleString('en-US')} due in 1 s, ${label}`,
        unit: 'ms',
        text: `p50 ${percentile(ms, 50).toFixed(0)} ms, p99 ${percentile(ms, 99).toFixed(0)} ms, max ${Math.max(...ms).toFixed(0)} ms`,
      });
      details[label] = { lateMs: ms };
    });
  }
  return {
    title: 'sleeping runs: how late they wake',
    rows,
    notes: [
      "lateness: wall clock at the start of the node after the sleep minus the sleep's time; each run due at a different ms of one second; workers at their defaults (poll 1 s, NOTIFY on)",
    ],
    details,
  };
}

/**
 * Runs waiting for an event, each signalled in turn: how long from `signal()` in this process
 * to the start of the node after the event in a worker woken by NOTIFY (its poll is a minute,
 * so a poll never does it).
 */
async function signalled(bench: WorkerBench): Promise<PartReport> {
  const count = bench.quick ? 20 : 200;
  const cue = bench.graphs.cue;
  check(cue !== undefined, 'this build of waymark has no event(): measure a build that has it');
  const ms: number[] = [];
  await inSchema(bench.admin, 'signal', async (schema) => {
    progress(`signal: ${count} runs, 1 worker`);
    const store = await bench.store(schema);
    const [worker] = (await startWaymarkWorkers(store, bench.build, 1, {
      pollMs: 60_000,
    })) as [Child];
    const started = new Map<string, number>();
    worker.onLine((line) => {
      const [what, runId, lateMs] = line.split(' ');
      if (what === 'signalled') started.set(runId!, Number(lateMs));
    });
    const runIds = await bench.wm.enqueueAll(
      store,
      cue,
      Array.from({ length: count }, () => ({})),
    );
    const until = Date.now() + 120_000;
    for (;;) {
      const { rows } = await bench.admin.query(
        `SELECT count(*)::int AS n FROM "${schema}".signal_waits`,
      );
      if (rows[0].n >= count) break;
      check(Date.now() < until, `only ${rows[0].n} of ${count} runs reached their event`);
      await sleep(100);
    }
    // One at a time, with the worker idle between them: the latency of one signal, not a queue's.
    for (const runId of runIds) {
      await bench.wm.signal(store, runId, 'go', { sentNs: String(process.hrtime.bigint()) });
      const by = Date.now() + 30_000;
      while (!started.has(runId)) {
        check(Date.now() < by, `the node after run ${runId}'s event did not start in 30 s`);
        await sleep(1);
      }
      ms.push(started.get(runId)!);
    }
    await stopAll([worker]);
    await store.close();
  });
  return {
    title: 'external events: from signal() to the next node',
    rows: [
      {
        measure: `signal -> node start, ${count} runs one at a time, 1 worker`,
        unit: 'ms',
        text: `p50 ${percentile(ms, 50).toFixed(1)} ms, p99 ${percentile(ms, 99).toFixed(1)} ms, max ${Math.max(...ms).toFixed(1)} ms`,
      },
    ],
    notes: [
      'signal -> node start: from signal() in the bench process (the delivery commit and its NOTIFY included) to the start of the node after the event in a worker process whose poll is a minute, by the monotonic clock',
    ],
    details: { ms },
  };
}

/**
 * More runs of a rate-limited call than its quota allows in a minute, on two worker processes:
 * the most calls that started in any 60 s (sliding, by the wall clock), and how many of them
 * were over the limit (goal 0). The worker processes are told the quota by WAYMARK_BENCH_RPM.
 */
async function rate(bench: WorkerBench): Promise<PartReport> {
  const rpm = Number(process.env.WAYMARK_BENCH_RPM ?? 60);
  const count = Math.round(rpm * (bench.quick ? 1.5 : 2.5));
  const metered = bench.graphs.metered;
  check(metered !== undefined, 'this build of waymark has no rate limits: measure one that has');
  const calls: number[] = [];
  let elapsedMs = 0;
  await inSchema(bench.admin, 'rate', async (schema) => {
    progress(`rate: ${count} runs at ${rpm} a minute, 2 workers`);
    const store = await bench.store(schema);
    const children = await startWaymarkWorkers(store, bench.build, 2);
    for (const child of children) {
      child.onLine((line) => {
        const [what, , at] = line.split(' ');
        if (what === 'called') calls.push(Number(at));
      });
    }
    const started = Date.now();
    await bench.wm.enqueueAll(
      store,
      metered,
      Array.from({ length: count }, () => ({})),
    );
    const until = started + (Math.ceil(count / rpm) + 1) * 60_000 + 30_000;
    while (calls.length < count) {
      check(Date.now() < until, `only ${calls.length} of ${count} calls were made`);
      await sleep(200);
    }
    elapsedMs = Date.now() - started;
    await stopAll(children);
    await store.close();
  });
  const sorted = calls.toSorted((a, b) => a - b);
  let most = 0;
  for (let i = 0, j = 0; i < sorted.length; i++) {
    while (sorted[i]! - sorted[j]! >= 60_000) j++;
    most = Math.max(most, i - j + 1);
  }
  return {
    title: 'rate limits: requests admitted above the limit',
    rows: [
      {
        measure: `overshoot, ${count} calls at ${rpm}/min on 2 workers`,
        unit: 'calls',
        text: `${Math.max(0, most - rpm)} over the limit (most in any 60 s: ${most} of ${rpm}), all made in ${(elapsedMs / 1000).toFixed(0)} s`,
      },
    ],
    notes: [
      'overshoot: the most calls whose bodies started within any 60 s window (sliding, by the wall clock shared by the worker processes), minus requestsPerMinute; goal 0',
    ],
    details: { rpm, calls: sorted },
  };
}

const parts: Readonly<Record<string, (bench: WorkerBench) => Promise<PartReport>>> = {
  asleep,
  wake,
  signal: signalled,
  rate,
};

const part = process.argv[2] ?? '';
const measure = parts[part];
if (measure === undefined) {
  process.stderr.write(`usage: node --import tsx bench/time.ts ${Object.keys(parts).join('|')}\n`);
  process.exit(2);
}
const bench = await workerBench();
const loadBefore = loadavg()[0]!;
try {
  const server = await serverInfo(bench.admin);
  const report = await measure(bench);
  emit({
    scenario: 'time',
    title: report.title,
    waymarkOrigin,
    rows: report.rows,
    notes: [
      `time ${part}: ${server}, ${bench.quick ? 'QUICK' : 'full'} settings, load average ${loadBefore.toFixed(2)} -> ${loadavg()[0]!.toFixed(2)}`,
      ...report.notes,
    ],
    details: report.details,
  });
} finally {
  await bench.admin.end();
}
