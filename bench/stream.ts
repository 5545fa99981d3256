// How long a commit takes to reach a watcher in another process: a writer process runs a loop
// on a SQLite file, its nodes pausing a random 2-12 ms; this process follows the run with
// `watch()` and notes, for each commit, the time from the commit (its `at`, the writer's clock:
// this machine's) to the first of its events arriving here. Polling every 20 ms (the default)
// and every 5 ms, alternating, after a warm-up by time. Then the same on PostgreSQL (when
// WAYMARK_PG_URL, or the local server, answers): the watcher woken by LISTEN/NOTIFY, and, to
// compare, polling every 20 ms with notifications off.
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
import { loadWaymarkPostgres, loadWaymarkSqlite, waymarkOrigin, wm } from './lib/waymark.js';

const settings = settingsFromEnv();
const here = fileURLToPath(new URL('.', import.meta.url));
const work = mkdtempSync(join(tmpdir(), 'waymark-stream-'));
const { SqliteStore } = await loadWaymarkSqlite();
const { PostgresStore } = await loadWaymarkPostgres();
const steps = settings.reps < 7 ? 40 : 150;
// The writer loads the same waymark as this process: the tsc build, or src/ through tsx.
const build = process.env.BENCH_WAYMARK_BUILD;
const index = build ?? join(here, '../src/index.ts');
const sqlite = build === undefined ? join(here, '../src/sqlite.ts') : join(build, '../sqlite.js');
const postgres =
  build === undefined ? join(here, '../src/postgres.ts') : join(build, '../postgres.js');
const pgUrl = process.env.WAYMARK_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const pgSchema = `waymark_bench_stream_${process.pid}`;
const loop = wm
  .graph('stream-bench', { state: z.object({ n: z.number().default(0) }) })
  .node('tick', async (s) => ({ n: s.n + 1 }), { visits: steps })
  .route('tick', (s) => (s.n < steps ? 'tick' : wm.END), ['tick', wm.END])
  .entry('tick')
  .compile();

/** Where a rep runs: SQLite, PostgreSQL with notifications, PostgreSQL polling. */
type Where = 'sqlite' | 'pg' | 'pg-poll';
type AnyStore = Parameters<typeof wm.watch>[0] & { close(): Promise<void> };

let runs = 0;
/** One writer run, watched with `pollMs`: the commit -> arrival latency of each commit, in ms. */
async function rep(pollMs: number, where: Where = 'sqlite'): Promise<number[]> {
  const runId = `r${++runs}`;
  const db = where === 'sqlite' ? join(work, `${runId}.db`) : `${pgUrl}#${pgSchema}`;
  const driver = where === 'sqlite' ? sqlite : postgres;
  const loader = build === undefined ? ['--import', 'tsx'] : [];
  const writer = spawn(
    process.execPath,
    [...loader, join(here, 'lib/stream-writer.mjs'), index, driver, db, runId, String(steps)],
    { stdio: ['ignore', 'ignore', 'inherit'] },
  );
  const exited = new Promise<number | null>((resolve) => writer.on('exit', resolve));
  const store: AnyStore =
    where === 'sqlite'
      ? new SqliteStore({ path: db })
      : new PostgresStore({
          connectionString: pgUrl,
          schema: pgSchema,
          poolSize: 2,
          notify: where === 'pg',
        });
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

// PostgreSQL, when there is one: woken by NOTIFY, and polling every 20 ms to compare.
const pgWays: readonly Where[] = ['pg', 'pg-poll'];
const pgSamples = new Map<Where, number[]>(pgWays.map((w) => [w, []]));
const pgReachable = await (async () => {
  const probe = new PostgresStore({ connectionString: pgUrl, schema: pgSchema, poolSize: 1 });
  try {
    await probe.listRuns({ limit: 1 });
    return true;
  } catch {
    return false;
  } finally {
    await probe.close();
  }
})();
if (pgReachable) {
  progress(`stream: PostgreSQL, ${settings.reps} runs of ${steps} steps, NOTIFY and polling`);
  await rep(20, 'pg');
  for (let i = 0; i < settings.reps; i++) {
    for (const where of i % 2 === 0 ? pgWays : [...pgWays].reverse()) {
      pgSamples.get(where)!.push(...(await rep(20, where)));
    }
  }
  const pg = (await import('pg')).default;
  const admin = new pg.Client({ connectionString: pgUrl });
  await admin.connect();
  await admin.query(`DROP SCHEMA IF EXISTS "${pgSchema}" CASCADE`);
  await admin.end();
}

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
if (pgReachable) {
  for (const where of pgWays) {
    const values = pgSamples.get(where)!;
    rows.push({
      measure:
        where === 'pg'
          ? 'PostgreSQL, commit -> watcher in another process, woken by LISTEN/NOTIFY'
          : 'PostgreSQL, the same polling every 20 ms (notify: false)',
      unit: 'ms',
      text: `p50 ${pct(values, 50)} ms, p99 ${pct(values, 99)} ms (n=${values.length})`,
    });
  }
}
emit({
  scenario: 'stream',
  title: "a run's stream followed from another process",
  waymarkOrigin,
  rows,
  notes: [
    `stream: a writer process runs a ${steps}-step loop on a SQLite file (nodes pause 2-12 ms); this process follows it with watch(); latency = arrival here - the commit's at (one clock: this machine's), first event of each commit, the first commit left out; ${settings.reps} runs per poll interval, alternating.`,
  ],
  details: { samples: Object.fromEntries(samples), pg: Object.fromEntries(pgSamples) },
});
