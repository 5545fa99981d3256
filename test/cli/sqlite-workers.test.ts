// `waymark worker` on SQLite: three worker processes on one machine share one file, with the
// same claims, leases and fencing as on PostgreSQL. Workers are SIGKILLed at random while they
// work and started again; every run still ends once, no activation completes twice, and no body
// starts after its activation's completion was committed (the history checker, waymark/testing).
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { enqueueAll, inspect } from '../../src/index.js';
import { SqliteStore } from '../../src/sqlite.js';
import { checkHistory, parseExecutionLog } from '../../src/testing/index.js';
import chain from './fixtures/sqlite-workers/chain.js';
import { bin, fixture, sandbox, testTimeoutMs } from './support.js';

const runCount = Number(process.env.WAYMARK_SQLITE_WORKER_RUNS ?? 40);
const killCount = Number(process.env.WAYMARK_SQLITE_WORKER_KILLS ?? 6);
const seed = Number(process.env.WAYMARK_SQLITE_WORKER_SEED ?? 20261204);

const children = new Set<ChildProcess>();

afterEach(() => {
  for (const child of children) child.kill('SIGKILL');
  children.clear();
});

/** A small seeded generator (mulberry32): the same kills for the same seed. */
function random(state: number): () => number {
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

it(`${runCount} runs on 3 SIGKILLed worker processes sharing one SQLite file each end once`, {
  timeout: testTimeoutMs * 2,
}, async () => {
  const box = sandbox();
  const file = join(box.dir, 'runs.sqlite');
  const log = join(box.dir, 'executions.log');
  const store = new SqliteStore({ path: file });
  const runIds = Array.from({ length: runCount }, (_, i) => `r${i}`);
  await enqueueAll(
    store,
    chain,
    runIds.map(() => ({})),
    { runIds },
  );

  const start = (): ChildProcess => {
    const child = spawn(
      process.execPath,
      [
        bin,
        '--store',
        file,
        'worker',
        '--graphs',
        fixture('sqlite-workers'),
        '--lease-ms',
        '1000',
        '--poll-ms',
        '50',
      ],
      {
        cwd: box.dir,
        env: { ...process.env, FIXTURE_LOG: log, FIXTURE_STEP_MS: '100' },
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    );
    children.add(child);
    child.on('exit', () => children.delete(child));
    return child;
  };
  const workers = [start(), start(), start()];
  const next = random(seed);

  const open = async () => (await store.listRuns({ status: ['running', 'waiting'] })).length;
  /** A worker that started a body within the last 60 ms: it is in that body now. */
  const busy = (): number | undefined => {
    if (!existsSync(log)) return undefined;
    const now = Date.now();
    const recent = new Set<string>();
    for (const r of parseExecutionLog(readFileSync(log, 'utf8')).records)
      if (r.type === 'attempt' && now - r.at < 60) recent.add(r.holder);
    const candidates = workers.flatMap((w, i) => (recent.has(String(w.pid)) ? [i] : []));
    if (candidates.length === 0) return undefined;
    return candidates[Math.floor(next() * candidates.length)];
  };
  let kills = 0;
  // Kill only a worker inside a body, so that every kill cuts one short.
  while (kills < killCount && (await open()) > 0) {
    await sleep(100 + next() * 200);
    let i = busy();
    // Until one is in a body: a worker just started (each kill starts one) loads its graph
    // first, seconds on a busy machine, and may be the only one left with work.
    for (const until = Date.now() + 30_000; i === undefined && Date.now() < until; ) {
      await sleep(10);
      i = busy();
    }
    if (i === undefined) break;
    const victim = workers[i]!;
    const exited = new Promise((resolve) => victim.once('exit', resolve));
    victim.kill('SIGKILL');
    await exited;
    kills++;
    workers[i] = start();
  }
  const deadline = Date.now() + 60_000;
  while ((await open()) > 0 && Date.now() < deadline) await sleep(100);

  for (const worker of workers) {
    const exited = new Promise((resolve) => worker.once('exit', resolve));
    worker.kill('SIGTERM');
    await exited;
  }

  expect(kills).toBe(killCount);
  const ended = await store.listRuns({ graph: chain.name });
  expect(ended.map((r) => r.status).sort()).toEqual(runIds.map(() => 'succeeded'));
  for (const runId of runIds) {
    const { snapshot } = await inspect(store, chain, runId);
    expect(snapshot.state.done).toEqual(['first', 'fan', 'branch', 'branch', 'branch', 'last']);
  }

  expect(existsSync(log)).toBe(true);
  const { records } = parseExecutionLog(readFileSync(log, 'utf8'));
  const report = await checkHistory(store, { log: records, graphs: [chain] });
  expect(report.violations).toEqual([]);
  expect(report.checked.runs).toBe(runCount);
  expect(report.checked.replayed).toBe(runCount);
  // The kills cut bodies short: some activation's body started again, in another process.
  const starts = new Map<string, Set<string>>();
  for (const r of records)
    if (r.type === 'attempt') {
      const key = `${r.runId} ${r.activation}`;
      starts.set(key, (starts.get(key) ?? new Set()).add(r.holder));
    }
  expect([...starts.values()].some((holders) => holders.size > 1)).toBe(true);
  await store.close();
});
