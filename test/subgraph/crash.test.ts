import type { ChildProcess } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SqliteStore } from '../../src/sqlite.js';
import { buildSrc, random, root, sleep, startChild } from '../crash/harness.js';

// Real processes, really killed, inside subgraphs: a child runs a map whose branch is a
// subgraph on a SQLite file and is SIGKILLed at a random moment; the next child resumes what
// it left running. Seeded: WAYMARK_CRASH_SEED=<seed> npx vitest run test/subgraph/crash.test.ts
const seed = Number(process.env.WAYMARK_CRASH_SEED ?? 20_261_201);
const targetKills = Number(process.env.WAYMARK_SUBGRAPH_KILLS ?? 60);

const child = join(root, 'test/subgraph/crash-child.mjs');
const files = ['a.ts', 'long.ts', 'b.ts'];
const activations = [
  'list:1',
  ...files.flatMap((file, i) => [
    `list:1[${i}]/audit/read:1`,
    `list:1[${i}]/audit/check:1`,
    `list:1[${i}]/audit/${file.length > 4 ? 'flag' : 'ok'}:1`,
  ]),
  'collect:1',
  'publish:1',
];
let work: string;
let build: string;

beforeAll(() => {
  ({ work, build } = buildSrc('subgraph-crash'));
}, 120_000);

afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('crash safety inside subgraphs, with real processes', () => {
  it(
    `finishes every run after ${targetKills} SIGKILLs, never re-running a completed child node`,
    async () => {
      const next = random(seed);
      const db = join(work, 'crash.db');
      const log = join(work, 'executions.log');
      const killed = new Set<number>();
      let total = 10;
      let children: ChildProcess[] = [];
      try {
        while (killed.size < targetKills) {
          const c = startChild(child, [build, db, log, String(total)]);
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
            total += 5;
          }
          children = children.filter((p) => p.exitCode === null && p.signalCode === null);
        }
        const last = startChild(child, [build, db, log, String(total)]);
        const { code } = await last.exit;
        expect(code, `the final child failed (seed ${seed}):\n${last.stderr()}`).toBe(0);
      } finally {
        for (const p of children) p.kill('SIGKILL');
      }

      const store = new SqliteStore({ path: db });
      try {
        const runs = await store.listRuns();
        expect(runs).toHaveLength(total);
        expect(runs.filter((r) => r.status !== 'succeeded').map((r) => r.id)).toEqual([]);
      } finally {
        await store.close();
      }
      // Every child node of every run ran; one that ran more than once did so only because the
      // process running it was killed before its completion was recorded.
      const ran = new Map<string, number[]>();
      for (const line of readFileSync(log, 'utf8').trim().split('\n')) {
        const [runId, activation, pid] = line.split(' ');
        const key = `${runId} ${activation}`;
        ran.set(key, [...(ran.get(key) ?? []), Number(pid)]);
      }
      const problems: string[] = [];
      let rerun = 0;
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
            rerun++;
          }
        }
      }
      expect(problems, `seed ${seed}`).toEqual([]);
      expect(ran.size).toBe(total * activations.length);
      console.log(
        `subgraph crash test: seed ${seed}, ${killed.size} kills, ${total} runs, ${rerun} interrupted activations re-run`,
      );
    },
    10 * 60_000,
  );
});
