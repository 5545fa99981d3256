// Latencies of the hand-offs between the database and the workers, with LISTEN/NOTIFY and with
// polling only, every timestamp on one machine's CLOCK_MONOTONIC (process.hrtime.bigint()).
//
// "commit -> start" is the interval the issue names: from the commit that schedules a task to
// that node's body starting. To see it alone, the roles are split: the run's fold (the commit)
// is made by an orchestrator-only worker in this process (concurrency 0, its commits timed as
// they return), the bodies run in two executor-only worker processes (folds 0), idle between
// samples. In a normal deployment every worker does both, and the worker that folded a commit
// runs a run's sole next node itself: two more intervals are timed with two such workers, "end ->
// next start" (a node's body returns -> the next node's body starts: the commit, on the same
// worker; with --no-inline the task's completion, the wake-up, the fold, the claim) and "enqueue
// -> first start".

import { performance } from 'node:perf_hooks';
import type { Commit } from '../../../src/store/store.js';
import { progress } from '../measure.js';
import { inSchema, percentile, sleep } from '../pg.js';
import type { Row } from '../report.js';
import { type Child, startWaymarkWorkers, stopAll } from './children.js';
import type { PartReport, WorkerBench } from './context.js';
import { msBetween, Timeline } from './timeline.js';

/** The poll interval of every worker here, in both modes (the Worker default is 1,000 ms). */
const pollMs = 250;

interface Samples {
  readonly commitToStart: number[];
  readonly endToStart: number[];
  /** The same with `inline: false`: every next node through the task queue. */
  readonly endToStartQueued: number[];
  readonly enqueueToStart: number[];
}

/** Runs `sample` for `warmupMs` untimed (at least 10 times), then `count` times. */
async function sampled(
  count: number,
  warmupMs: number,
  sample: (i: number, timed: boolean) => Promise<void>,
) {
  const started = performance.now();
  for (let i = 0; i < 10 || performance.now() - started < warmupMs; i++) await sample(i, false);
  for (let i = 0; i < count; i++) {
    await sample(i, true);
    // Independent samples: the next run starts at a random moment of the workers' poll cycle.
    await sleep(Math.random() * 30);
  }
}

async function split(bench: WorkerBench, notify: boolean, count: number, into: number[]) {
  await inSchema(bench.admin, 'lat', async (schema) => {
    const store = await bench.store(schema, { notify });
    // When each scheduling commit was sent, and its reply: the transaction commits (and its
    // NOTIFY goes out) in between. Timed from the send, so the interval includes the commit.
    const committed = new Map<string, { sent: bigint; done: Promise<unknown> }>();
    const commit = store.commit.bind(store);
    store.commit = (runId: string, c: Commit) => {
      const sent = process.hrtime.bigint();
      const done = commit(runId, c);
      for (const task of c.schedule?.tasks ?? [])
        committed.set(`${runId}/${task.activation}`, { sent, done: done.catch(() => {}) });
      return done;
    };
    // A fold's steps may go as one group: their scheduled tasks count from the group's send.
    const commitAll = store.commitAll.bind(store);
    store.commitAll = (runId: string, commits: readonly Commit[]) => {
      const sent = process.hrtime.bigint();
      const done = commitAll(runId, commits);
      for (const c of commits)
        for (const task of c.schedule?.tasks ?? [])
          committed.set(`${runId}/${task.activation}`, { sent, done: done.catch(() => {}) });
      return done;
    };
    const executors = await startWaymarkWorkers(store, bench.build, 2, {
      folds: 0,
      pollMs,
      notify,
    });
    const timeline = new Timeline();
    timeline.follow(executors);
    const stop = new AbortController();
    const orchestrator = new bench.wm.Worker(store, [bench.graphs.pair], {
      concurrency: 0,
      pollMs,
    });
    const running = orchestrator.run(stop.signal);
    try {
      await sampled(count, bench.settings.warmupMs, async (i, timed) => {
        const runId = `${timed ? 'r' : 'w'}${i}`;
        await bench.wm.enqueue(store, bench.graphs.pair, {}, { runId });
        await store.wake(runId, Date.now()); // the orchestrator's start is not what is timed
        for (const activation of ['a:1', 'b:1']) {
          const start = await timeline.at(runId, activation, 'start');
          const at = committed.get(`${runId}/${activation}`);
          if (at === undefined)
            throw new Error(`bench: no commit scheduled ${runId}/${activation}`);
          await at.done;
          if (timed) into.push(msBetween(at.sent, start.ns));
        }
      });
    } finally {
      stop.abort();
      await running;
      await stopAll(executors);
      await store.close();
    }
  });
}

async function together(
  bench: WorkerBench,
  notify: boolean,
  count: number,
  samples: Samples,
  inline: boolean,
) {
  await inSchema(bench.admin, 'lat', async (schema) => {
    const store = await bench.store(schema, { notify });
    let workers: Child[] = [];
    try {
      workers = await startWaymarkWorkers(store, bench.build, 2, { pollMs, notify, inline });
      const timeline = new Timeline();
      timeline.follow(workers);
      await sampled(count, bench.settings.warmupMs, async (i, timed) => {
        const runId = `${timed ? 'r' : 'w'}${i}`;
        await bench.wm.enqueue(store, bench.graphs.pair, {}, { runId });
        const enqueued = process.hrtime.bigint();
        const a = await timeline.at(runId, 'a:1', 'start');
        const end = await timeline.at(runId, 'a:1', 'end');
        const b = await timeline.at(runId, 'b:1', 'start');
        if (!timed) return;
        if (!inline) return void samples.endToStartQueued.push(msBetween(end.ns, b.ns));
        samples.enqueueToStart.push(msBetween(enqueued, a.ns));
        samples.endToStart.push(msBetween(end.ns, b.ns));
      });
    } finally {
      await stopAll(workers);
      await store.close();
    }
  });
}

function spread(values: readonly number[]): string {
  const f = (ms: number) => (ms >= 100 ? Math.round(ms).toString() : ms.toFixed(1));
  return `p50 ${f(percentile(values, 50))} ms, p99 ${f(percentile(values, 99))} ms (n=${values.length})`;
}

export async function latency(bench: WorkerBench): Promise<PartReport> {
  const rows: Row[] = [];
  const details: Record<string, unknown> = {};
  for (const notify of [true, false]) {
    const mode = notify ? 'NOTIFY' : `polling only, every ${pollMs} ms`;
    const runs = bench.quick ? 20 : notify ? 200 : 100;
    progress(`workers latency: ${mode}, ${runs} runs per setup`);
    const samples: Samples = {
      commitToStart: [],
      endToStart: [],
      endToStartQueued: [],
      enqueueToStart: [],
    };
    await split(bench, notify, runs, samples.commitToStart);
    await together(bench, notify, runs, samples, true);
    await together(bench, notify, runs, samples, false);
    rows.push(
      {
        measure: `latency, ${mode}: commit -> node start`,
        unit: 'ms',
        text: spread(samples.commitToStart),
      },
      {
        measure: `latency, ${mode}: node end -> next node start`,
        unit: 'ms',
        text: spread(samples.endToStart),
      },
      {
        measure: `latency, ${mode}: node end -> next node start, --no-inline`,
        unit: 'ms',
        text: spread(samples.endToStartQueued),
      },
      {
        measure: `latency, ${mode}: enqueue -> first node start`,
        unit: 'ms',
        text: spread(samples.enqueueToStart),
      },
    );
    details[notify ? 'notify' : 'polling'] = samples;
  }
  return {
    title: 'claim-to-start latency: NOTIFY vs polling only',
    rows,
    notes: [
      `latency: poll interval ${pollMs} ms in both modes (the Worker default is 1,000 ms; polling-only latencies scale with it). "commit -> node start": the fold's commit that schedules the task is sent by an orchestrator-only worker in the bench process (so the interval includes the commit itself) -> the body starts in one of 2 idle executor-only worker processes (2 samples per run of a 2-node graph). "node end -> next node start" and "enqueue -> first node start": 2 ordinary workers (fold + execute), where the worker that folds a's completion runs b itself; "--no-inline": the same workers with inline: false, b through the task queue. Runs one at a time, a random 0-30 ms apart; warm-up >= ${bench.settings.warmupMs / 1000} s. Anchor: Graphile Worker 4.3 ms average enqueue -> start.`,
    ],
    details,
  };
}
