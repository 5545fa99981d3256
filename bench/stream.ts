// How long a commit takes to reach a watcher in another process: a writer process runs a loop
// on a SQLite file, its nodes pausing a random 2-12 ms; this process follows the run with
// `watch()` and notes, for each commit, the time from the commit (its `at`, the writer's clock:
// this machine's) to the first of its events arriving here. Polling every 20 ms (the default)
// and every 5 ms, alternating, after a warm-up by time.
//
//   npm run bench -- stream
//
// Printed, never asserted.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { check, progress, settingsFromEnv } from './lib/measure.js';
import { emit, type Row } from './lib/report.js';
import { loadWaymarkSqlite, waymarkOrigin, wm } from './lib/waymark.js';

const settings = settingsFromEnv();
const here = fileURLToPath(new URL('.', import.meta.url));
const work = mkdtempSync(join(tmpdir(), 'waymark-stream-'));
const { SqliteStore } = await loadWaymarkSqlite();
const steps = settings.reps < 7 ? 40 : 150;
// The writer loads the same waymark as this process: the tsc build, or src/ through tsx.
const build = process.env.BENCH_WAYMARK_BUILD;
const index = build ?? join(here, '../src/index.ts');
const sqlite = build === undefined ? join(here, '../src/sqlite.ts') : join(build, '../sqlite.js');
const loop = wm
  .graph('stream-bench', { state: z.object({ n: z.number().default(0) }) })
  .node('tick', async (s) => ({ n: s.n + 1 }), { visits: steps })
  .route('tick', (s) => (s.n < steps ? 'tick' : wm.END), ['tick', wm.END])
  .entry('tick')
  .compile();

let runs = 0;
/** One writer run, watched with `pollMs`: the commit -> arrival latency of each commit, in ms. */
async function rep(pollMs: number): Promise<number[]> {
  const runId = `r${++runs}`;
  const db = join(work, `${runId}.db`);
  const loader = build === undefined ? ['--import', 'tsx'] : [];
  const writer = spawn(
    process.execPath,
    [...loader, join(here, 'lib/stream-writer.mjs'), index, sqlite, db, runId, String(steps)],
    { stdio: ['ignore', 'ignore', 'inherit'] },
  );
  const exited = new Promise<number | null>((resolve) => writer.on('exit', resolve));
  const store = new SqliteStore({ path: db });
  const latencies: number[] = [];
  let lastSeq = 0;
  try {
    for (;;) {
      try {
        for await (const event of wm.watch(store, loop, runId, { pollMs })) {
          if (event.seq > lastSeq) {
            latencies.push(Date.now() - event.at);
            lastSeq = event.seq;
          }
        }
        break;
      } catch (error) {
        // The writer has not created the run yet.
        if (!String(error).includes('RUN_NOT_FOUND')) throw error;
        await new Promise((resolve) => setTimeout(resolve, 2));
      }
    }
  } finally {
    await store.close();
  }
  check((await exited) === 0, `the writer of ${runId} failed`);
  check(lastSeq >= steps, `the watcher of ${runId} saw ${lastSeq} commits`);
  // The first commit may have landed before the watcher found the run: not a follow.
  return latencies.slice(1);
}

const polls = [20, 5];
const samples = new Map<number, number[]>(polls.map((p) => [p, []]));
progress(
  `stream: warm-up ${settings.warmupMs} ms, then ${settings.reps} runs of ${steps} steps per poll interval`,
);
const warmUntil = Date.now() + settings.warmupMs;
while (Date.now() < warmUntil) await rep(20);
for (let i = 0; i < settings.reps; i++) {
  for (const pollMs of i % 2 === 0 ? polls : [...polls].reverse()) {
    samples.get(pollMs)!.push(...(await rep(pollMs)));
  }
}
rmSync(work, { recursive: true, force: true });

const pct = (values: readonly number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
};
const rows: Row[] = polls.map((pollMs) => {
  const values = samples.get(pollMs)!;
  const p50 = pct(values, 50);
  return {
    measure: `SQLite, commit -> watcher in another process, polling every ${pollMs} ms`,
    unit: 'ms',
    text: `p50 ${p50} ms, p99 ${pct(values, 99)} ms (n=${values.length})`,
    target: '< 20 ms (p50)',
    met: p50 < 20,
  };
});
emit({
  scenario: 'stream',
  title: "a run's stream followed from another process",
  waymarkOrigin,
  rows,
  notes: [
    `stream: a writer process runs a ${steps}-step loop on a SQLite file (nodes pause 2-12 ms); this process follows it with watch(); latency = arrival here - the commit's at (one clock: this machine's), first event of each commit, the first commit left out; ${settings.reps} runs per poll interval, alternating.`,
  ],
  details: { samples: Object.fromEntries(samples) },
});
