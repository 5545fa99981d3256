import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import * as waymark from '../../src/index.js';
import { enqueue, inspect } from '../../src/index.js';
import { PostgresStore } from '../../src/postgres.js';
import { buildSrc, root } from '../crash/harness.js';
import { describePg, dropSchema, pgUrl, schemaName, testPool } from '../store/fixtures/postgres.js';
// @ts-expect-error: a plain-JavaScript module shared with the worker processes
import { chaosGraphs } from './chaos-graphs.mjs';

// A worker paused with SIGSTOP past its lease, then continued: its work was taken over by another
// worker, and what it sends afterwards (its late result) is refused: the activation completes
// once, with the other worker's result.

let work: string;
let build: string;
const schema = schemaName();
const pool = testPool();
let store: PostgresStore;
const children: ChildProcess[] = [];

beforeAll(async () => {
  ({ work, build } = buildSrc('zombie'));
  store = await PostgresStore.open({ pool, schema });
}, 180_000);

afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  await store?.close();
  await dropSchema(pool, schema).catch(() => {});
  await pool.end();
  if (work) rmSync(work, { recursive: true, force: true });
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until<T>(
  what: string,
  check: () => Promise<T | undefined>,
  ms = 20_000,
): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > end) throw new Error(`${what}: not within ${ms} ms`);
    await sleep(50);
  }
}

describePg('a zombie worker', () => {
  it('paused past its lease and continued: its late result is refused, another worker did the work', {
    timeout: 60_000,
  }, async () => {
    const log = join(work, 'executions.log');
    writeFileSync(log, '');
    const graphs = chaosGraphs(waymark, { log, receiver: 'http://127.0.0.1:9/' }) as Record<
      string,
      waymark.CompiledGraph
    >;
    const start = (leaseMs: string) => {
      const child = spawn(
        process.execPath,
        [
          join(root, 'test/workers/chaos-worker.mjs'),
          build,
          pgUrl,
          schema,
          log,
          'http://127.0.0.1:9/',
          leaseMs,
        ],
        { stdio: ['ignore', 'ignore', 'inherit'], env: { ...process.env, ZOMBIE_NODE_MS: '3000' } },
      );
      children.push(child);
      return child;
    };
    const first = start('1500');
    await enqueue(store, graphs.zombie!, {}, { runId: 'z' });
    const claimed = await until('the first worker claims the slow node', async () => {
      const [task] = await store.listTasks('z');
      return task?.owner.includes(`:${first.pid}:`) ? task : undefined;
    });
    first.kill('SIGSTOP'); // frozen mid-node: it can neither renew nor finish

    const second = start('1500');
    const taken = await until('another worker takes the task over', async () => {
      const [task] = await store.listTasks('z');
      return task !== undefined &&
        task.epoch > claimed.epoch &&
        task.owner.includes(`:${second.pid}:`)
        ? task
        : undefined;
    });
    expect(taken.epoch).toBe(claimed.epoch + 1);
    first.kill('SIGCONT'); // the zombie wakes, its node returns, its result is refused

    const done = await until('the run ends', async () => {
      const run = await store.getRun('z');
      return run?.status === 'succeeded' ? run : undefined;
    });
    expect(done.status).toBe('succeeded');
    const view = await inspect(store, graphs.zombie!, 'z');
    expect(view.snapshot.state.who).toBe(String(second.pid));
    const completed = (await store.events('z')).filter(
      (e) => e.event.includes('"completed"') && e.event.includes('"slow:1"'),
    );
    expect(completed).toHaveLength(1);
    // Both ran the body; only the second one's result counts.
    const ran = readFileSync(log, 'utf8')
      .trim()
      .split('\n')
      .filter((l) => l.startsWith('z slow:1 '));
    expect(ran.map((l) => Number(l.split(' ')[3])).sort()).toEqual([first.pid, second.pid].sort());
    await sleep(3_500); // the zombie's late result has been sent, and refused, by now
    expect(
      (await store.events('z')).filter(
        (e) => e.event.includes('"slow:1"') && e.event.includes('"completed"'),
      ),
    ).toHaveLength(1);
    expect(await store.inbox('z')).toEqual([]);
  });
});
