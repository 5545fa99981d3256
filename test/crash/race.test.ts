import { spawn } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SqliteStore } from '../../src/sqlite.js';
import { buildSrc, random, root, sleep, startChild } from './harness.js';

// Two processes race to resume the same interrupted run: one wins each time, the other is
// refused with RUN_OWNED, and no activation body runs in both. Real processes on one SQLite
// file; the run's owner was SIGKILLed mid-flight, so both resumers find it provably dead.
// Seeded; WAYMARK_RACE_ROUNDS=<n> for a longer soak.
const seed = Number(process.env.WAYMARK_CRASH_SEED ?? 20_261_201);
const rounds = Number(process.env.WAYMARK_RACE_ROUNDS ?? 50);
const child = join(root, 'test/crash/race-child.mjs');
let work: string;
let build: string;

beforeAll(() => {
  ({ work, build } = buildSrc('race'));
}, 120_000);

afterAll(() => rmSync(work, { recursive: true, force: true }));

/** A resumer: ready once loaded, racing when told "go"; resolves with its exit code and output. */
function resumer(db: string, log: string, runId: string) {
  const proc = spawn(process.execPath, [child, build, db, log, runId, 'resume'], {
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  proc.stdout.on('data', (d) => {
    out += String(d);
  });
  proc.stderr.on('data', (d) => {
    err += String(d);
  });
  const ready = new Promise<void>((resolve) => {
    const check = () => (out.includes('ready') ? resolve() : undefined);
    proc.stdout.on('data', check);
  });
  const exit = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)));
  return { proc, ready, exit, go: () => proc.stdin.end('go\n'), output: () => out + err };
}

describe('the ownership race with real processes', () => {
  it(
    `of two processes resuming the same interrupted run, one wins, ${rounds} times out of ${rounds}`,
    async () => {
      const next = random(seed);
      const db = join(work, 'race.db');
      const outcomes: string[] = [];
      const overlaps: string[] = [];
      for (let round = 0; round < rounds; round++) {
        const runId = `race-${round}`;
        const log = join(work, `${runId}.log`);
        // The run's first owner, killed somewhere in its first nodes.
        const first = startChild(child, [build, db, log, runId, 'start']);
        await new Promise<void>((resolve) =>
          first.proc.stdout!.on('data', (d) => String(d).includes('started') && resolve()),
        );
        await sleep(Math.floor(next() * 40));
        first.proc.kill('SIGKILL');
        await first.exit;

        const a = resumer(db, log, runId);
        const b = resumer(db, log, runId);
        await Promise.all([a.ready, b.ready]);
        a.go();
        b.go();
        const codes = [await a.exit, await b.exit];
        outcomes.push(
          [...codes].sort().join(',') === '0,4'
            ? 'one won'
            : `round ${round}: exits ${codes.join(', ')}\n${a.output()}\n${b.output()}`,
        );

        // No activation body ran in both resumers.
        const ranBy = new Map<string, Set<number>>();
        for (const line of readFileSync(log, 'utf8').trim().split('\n')) {
          const [activation, pid] = line.split(' ');
          if (Number(pid) === first.proc.pid) continue;
          ranBy.set(activation!, (ranBy.get(activation!) ?? new Set()).add(Number(pid)));
        }
        for (const [activation, pids] of ranBy) {
          if (pids.size > 1) overlaps.push(`round ${round}: ${activation} ran in ${[...pids]}`);
        }
      }
      expect(
        outcomes.filter((o) => o !== 'one won'),
        `seed ${seed}`,
      ).toEqual([]);
      expect(overlaps, `seed ${seed}`).toEqual([]);

      const store = new SqliteStore({ path: db });
      try {
        const runs = await store.listRuns();
        expect(runs).toHaveLength(rounds);
        expect(runs.filter((r) => r.status !== 'succeeded')).toEqual([]);
      } finally {
        await store.close();
      }
    },
    10 * 60_000,
  );
});
