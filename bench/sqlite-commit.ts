// What one durable step costs in the SQLite store: N commits of a small event, with
// synchronous=NORMAL (the default) and FULL (fsync on every commit), each on its own temp file.
// Warm-up by time, then 7 repetitions alternating the two modes; prints the median per commit.
//
//   node --import tsx bench/sqlite-commit.ts            N=2000, 7 repetitions
//   node --import tsx bench/sqlite-commit.ts --quick    N=200, 3 repetitions: a smoke test
//
// The numbers are printed, never asserted.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteStore } from '../src/sqlite.js';

const quick = process.argv.includes('--quick');
const commits = quick ? 200 : 2_000;
const repetitions = quick ? 3 : 7;
const warmUpMs = quick ? 200 : 3_000;
const modes = ['normal', 'full'] as const;
type Mode = (typeof modes)[number];

const dir = mkdtempSync(join(tmpdir(), 'waymark-bench-sqlite-'));
const stores = Object.fromEntries(
  modes.map((mode) => [
    mode,
    new SqliteStore({ path: join(dir, `${mode}.db`), synchronous: mode }),
  ]),
) as Record<Mode, SqliteStore>;
let runs = 0;

/** Creates a run and commits `commits` steps to it; returns microseconds per commit. */
async function repetition(store: SqliteStore): Promise<number> {
  const runId = `run-${++runs}`;
  await store.createRun({
    id: runId,
    graph: 'bench',
    graphHash: 'hash',
    graphVersion: 1,
    stateVersion: 1,
    createdAt: 0,
    status: 'running',
    snapshot: '{"state":{"count":0}}',
  });
  const start = performance.now();
  for (let seq = 1; seq <= commits; seq++) {
    await store.commit(runId, {
      seq,
      at: seq,
      event: `{"type":"completed","activation":"step:${seq}","update":{"count":${seq}}}`,
      trace: null,
      status: 'running',
      error: null,
      snapshot: null,
    });
  }
  const elapsed = performance.now() - start;
  const run = await store.getRun(runId);
  if (run?.seq !== commits)
    throw new Error(`run ${runId} ended at seq ${run?.seq}, not ${commits}`);
  return (elapsed * 1_000) / commits;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

try {
  const warmUntil = performance.now() + warmUpMs;
  while (performance.now() < warmUntil) for (const mode of modes) await repetition(stores[mode]);

  const samples: Record<Mode, number[]> = { normal: [], full: [] };
  for (let i = 0; i < repetitions; i++)
    for (const mode of modes) samples[mode].push(await repetition(stores[mode]));

  const fmt = (us: number) => us.toFixed(1).padStart(7);
  process.stdout.write(
    `SqliteStore.commit, ${commits} commits per repetition, median of ${repetitions} (us per commit)\n`,
  );
  process.stdout.write(`  synchronous    median      min      max\n`);
  for (const mode of modes) {
    const s = samples[mode];
    process.stdout.write(
      `  ${mode.padEnd(11)} ${fmt(median(s))}  ${fmt(Math.min(...s))}  ${fmt(Math.max(...s))}\n`,
    );
  }
  process.stdout.write(
    `  full / normal: ${(median(samples.full) / median(samples.normal)).toFixed(1)}x\n`,
  );
} finally {
  for (const store of Object.values(stores)) await store.close();
  rmSync(dir, { recursive: true, force: true });
}
