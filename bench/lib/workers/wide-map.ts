// A 1,000-item map of no-op nodes against a 100-item one, on 4 worker processes: if the run's
// row were a hot spot that every completion queued on, the cost per item would grow with the
// width. Completions go to the run's inbox instead and whoever holds the run folds them in
// batches, so the cost per item should stay flat and a commit should carry many completions.
// Each width has its own schema and workers; the two alternate, the one not timed paused.

import type { PostgresStore } from '../../../src/postgres.js';
import { check, progress, stat } from '../measure.js';
import { inSchema, sleep } from '../pg.js';
import type { Row } from '../report.js';
import { type Alternating, alternate } from './alternate.js';
import { type Child, startWaymarkWorkers, stopAll } from './children.js';
import type { PartReport, WorkerBench } from './context.js';
import { wideWidths } from './graphs.mjs';

interface WideRep {
  /** Enqueue -> run succeeded. */
  readonly ms: number;
  /** The events the run's history holds: its commits. */
  readonly commits: number;
  /** The last item's body ends -> run succeeded: folding the backlog, the join, the end. */
  readonly tailMs: number;
}

const workers = 4;
const concurrency = 25;

function side(
  bench: WorkerBench,
  store: PostgresStore,
  children: readonly Child[],
  width: number,
): Alternating<WideRep> {
  const graph = width === wideWidths[0] ? bench.graphs.map100 : bench.graphs.map1000;
  return {
    children,
    async rep(label) {
      const runId = `${label}`;
      const t0 = Date.now();
      await bench.wm.enqueue(store, graph, {}, { runId });
      const until = t0 + 120_000;
      for (;;) {
        const run = await store.getRun(runId);
        if (run?.status === 'succeeded') {
          const view = await bench.wm.inspect(store, graph, runId);
          const out = view.snapshot.state.out;
          check(
            out.length === width && out.every((v, i) => v === i),
            `map ${width} ${label} ended with ${out.length} items`,
          );
          const items = view.trace.entries.filter((e) => e.node === 'item');
          const lastEnd = Math.max(...items.map((e) => e.startedAt + e.durationMs));
          const commits = (await store.events(runId)).length;
          return { ms: run.updatedAt - t0, commits, tailMs: run.updatedAt - lastEnd };
        }
        check(run?.status === 'running', `map ${width} ${label} ended ${run?.status}`);
        check(Date.now() < until, `map ${width} ${label} still running after 120 s`);
        await sleep(5);
      }
    },
  };
}

export async function wideMap(bench: WorkerBench): Promise<PartReport> {
  const reps = bench.settings.reps;
  const [narrow, wide] = wideWidths;
  progress(
    `workers wide map: ${narrow} vs ${wide} no-op items, ${workers} workers, ${reps} repetitions`,
  );
  const [narrowReps, wideReps] = await inSchema(bench.admin, 'map1', (schema1) =>
    inSchema(bench.admin, 'map2', async (schema2) => {
      const store1 = await bench.store(schema1);
      const store2 = await bench.store(schema2);
      const children1 = await startWaymarkWorkers(store1, bench.build, workers, { concurrency });
      const children2 = await startWaymarkWorkers(store2, bench.build, workers, { concurrency });
      try {
        return await alternate(
          [side(bench, store1, children1, narrow), side(bench, store2, children2, wide)],
          bench.settings.warmupMs,
          reps,
        );
      } finally {
        await stopAll([...children1, ...children2]);
        await store1.close();
        await store2.close();
      }
    }),
  );
  const perItem = (r: WideRep, width: number) => (r.ms * 1000) / width;
  const narrowItem = narrowReps!.map((r) => perItem(r, narrow));
  const wideItem = wideReps!.map((r) => perItem(r, wide));
  const growth = stat(wideItem.map((us, i) => us / narrowItem[i]!));
  const commits = (rs: readonly WideRep[]) => Math.round(stat(rs.map((r) => r.commits)).median);
  const rows: Row[] = [
    {
      measure: `map of ${narrow} no-op items, ${workers} workers: run`,
      unit: 'ms',
      waymark: stat(narrowReps!.map((r) => r.ms)),
    },
    {
      measure: `map of ${wide} no-op items, ${workers} workers: run`,
      unit: 'ms',
      waymark: stat(wideReps!.map((r) => r.ms)),
    },
    { measure: `  per item, ${narrow} items`, unit: 'us', waymark: stat(narrowItem) },
    { measure: `  per item, ${wide} items`, unit: 'us', waymark: stat(wideItem) },
    {
      measure: `  growth per item, ${wide} / ${narrow} items`,
      unit: 'x',
      text: `x${growth.median.toFixed(2)} (${growth.min.toFixed(2)}-${growth.max.toFixed(2)})`,
      target: 'flat: < 1.5x',
      met: growth.median < 1.5,
    },
    {
      measure: `  commits in the run's history, ${narrow} / ${wide} items`,
      unit: '',
      text: `${commits(narrowReps!)} / ${commits(wideReps!)}`,
    },
    {
      measure: `  last item end -> run succeeded, ${narrow} / ${wide} items`,
      unit: 'ms',
      text: `${Math.round(stat(narrowReps!.map((r) => r.tailMs)).median)} / ${Math.round(stat(wideReps!.map((r) => r.tailMs)).median)} ms`,
    },
  ];
  return {
    title: `A ${wide}-item map: no hot row`,
    rows,
    notes: [
      `wide map: enqueue -> run succeeded (its final commit's time), a map of no-op items with map concurrency = width, ${workers} worker processes at concurrency ${concurrency} each, the other defaults; the holder folds what its inbox holds in one statement per fold (one event per completion, plus the start, the split and the join), so the tail after the last item is the fold's backlog; ${reps} repetitions, growth paired by repetition.`,
    ],
    details: { narrow: narrowReps, wide: wideReps, growth },
  };
}
