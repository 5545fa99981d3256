import type { ChildProcess } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SqliteStore } from '../../src/sqlite.js';
import { buildSrc, random, root, sleep, startChild } from './harness.js';

// Real processes, really killed: a child runs graphs on a SQLite file and is SIGKILLed at a
// random moment; the next child resumes what it left running. Seeded, so a failure replays:
// WAYMARK_CRASH_SEED=<seed> npx vitest run test/crash
const seed = Number(process.env.WAYMARK_CRASH_SEED ?? 20_261_130);
const targetKills = Number(process.env.WAYMARK_CRASH_KILLS ?? 200);

const child = join(root, 'test/crash/child.mjs');
const activations = [
  'fetch:1',
  'select:1',
  'select:1[0]/fix:1',
  'select:1[1]/tests:1',
  'merge:1',
  'verify:1',
  'publish:1',
];
let work: string;
let build: string;

beforeAll(() => {
  ({ work, build } = buildSrc('crash'));
}, 120_000);

afterAll(() => rmSync(work, { recursive: true, force: true }));

function start(db: string, log: string, total: number) {
  return startChild(child, [build, db, log, String(total)]);
}

describe('crash safety with real processes', () => {
  it(
    `finishes every run after ${targetKills} SIGKILLs at random moments, never re-running a completed activation`,
    async () => {
      const next = random(seed);
      const db = join(work, 'crash.db');
      const log = join(work, 'executions.log');
      const killed = new Set<number>();
      let total = 20;
      let children: ChildProcess[] = [];
      try {
        while (killed.size < targetKills) {
          const c = start(db, log, total);
          children.push(c.proc);
          await c.ready;
          const outcome = await Promise.race([
            sleep(Math.floor(next() * 40)).then(() => 'kill' as const),
            c.exit,
          ]);
          if (outcome === 'kill') {
            c.proc.kill('SIGKILL');
            const { signal } = await c.exit;
            if (signal === 'SIGKILL') killed.add(c.proc.pid!);
          } else {
            expect(outcome.code, `a child failed (seed ${seed}):\n${c.stderr()}`).toBe(0);
            total += 10; // it finished everything before its kill came: give the next one more to do
          }
          children = children.filter((p) => p.exitCode === null && p.signalCode === null);
        }
        const last = start(db, log, total);
        const { code } = await last.exit;
        expect(code, `the final child failed (seed ${seed}):\n${last.stderr()}`).toBe(0);
      } finally {
        for (const p of children) p.kill('SIGKILL');
      }

      const sqlite = new Database(db, { readonly: true });
      try {
        expect(sqlite.pragma('integrity_check', { simple: true })).toBe('ok');
      } finally {
        sqlite.close();
      }
      const store = new SqliteStore({ path: db });
      try {
        const runs = await store.listRuns();
        expect(runs).toHaveLength(total);
        expect(runs.filter((r) => r.status !== 'succeeded').map((r) => r.id)).toEqual([]);
      } finally {
        await store.close();
      }

      // Every activation of every run ran; one that ran more than once did so only because the
      // process running it was killed before its completion was recorded.
      const ran = new Map<string, number[]>();
      for (const line of readFileSync(log, 'utf8').trim().split('\n')) {
        const [runId, activation, pid] = line.split(' ');
        const key = `${runId} ${activation}`;
        ran.set(key, [...(ran.get(key) ?? []), Number(pid)]);
      }
      const problems: string[] = [];
      const repeatsPerKill = new Map<number, number>();
      for (let n = 0; n < total; n++) {
        const runId = `run-${String(n).padStart(4, '0')}`;
        for (const activation of activations) {
          const pids = ran.get(`${runId} ${activation}`) ?? [];
          if (pids.length === 0) problems.push(`${runId} ${activation} never ran`);
          for (const pid of pids.slice(0, -1)) {
            if (!killed.has(pid))
              problems.push(
                `${runId} ${activation} ran again after completing in live process ${pid}`,
              );
            repeatsPerKill.set(pid, (repeatsPerKill.get(pid) ?? 0) + 1);
          }
        }
      }
      expect(problems, `seed ${seed}`).toEqual([]);
      // A kill interrupts at most the activations in flight: two, in the fan-out.
      expect(Math.max(0, ...repeatsPerKill.values())).toBeLessThanOrEqual(2);
      expect(killed.size).toBeGreaterThanOrEqual(targetKills);
      // The kills did land mid-run: some activations were interrupted and ran again.
      if (targetKills >= 100) expect(repeatsPerKill.size).toBeGreaterThan(0);
      console.log(
        `crash test: seed ${seed}, ${killed.size} kills, ${total} runs, ${[...repeatsPerKill.values()].reduce((a, b) => a + b, 0)} interrupted activations re-run`,
      );
    },
    15 * 60_000,
  );
});
