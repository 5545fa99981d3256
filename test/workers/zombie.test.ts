import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import * as waymark from '../../src/index.js';
import { enqueue, inspect } from '../../src/index.js';
import { PostgresStore } from '../../src/postgres.js';
import { buildSrc, root } from '../crash/harness.js';
import { describePg, dropSchema, pgUrl, schemaName, testPool } from '../store/fixtures/postgres.js';
// @ts-expect-error: a plain-JavaScript module shared with the worker processes
import { chaosGraphs } from './chaos-graphs.mjs';
import { until } from './fixtures/until.js';

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

// Each case starts its own workers: none of one case may claim the next one's run.
afterEach(() => {
  for (const child of children.splice(0)) child.kill('SIGKILL');
});

afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  await store?.close();
  await dropSchema(pool, schema).catch(() => {});
  await pool.end();
  if (work) rmSync(work, { recursive: true, force: true });
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

// Takeovers wait out a lease of 1.5 s and a poll: more time than other tests give.
const within = <T>(what: string, check: () => Promise<T | undefined>) => until(what, check, 20_000);

describePg('a zombie worker', () => {
  /** A worker process with a 1.5 s lease; `inline: false` queues every activation as a task. */
  const start = (log: string, inline: boolean) => {
    const child = spawn(
      process.execPath,
      [
        join(root, 'test/workers/chaos-worker.mjs'),
        build,
        pgUrl,
        schema,
        log,
        'http://127.0.0.1:9/',
        '1500',
      ],
      {
        stdio: ['ignore', 'ignore', 'inherit'],
        env: { ...process.env, ZOMBIE_NODE_MS: '3000', WORKER_INLINE: inline ? '1' : '0' },
      },
    );
    children.push(child);
    return child;
  };

  const graphsFor = (log: string) =>
    chaosGraphs(waymark, { log, receiver: 'http://127.0.0.1:9/' }) as Record<
      string,
      waymark.CompiledGraph
    >;

  /** The run ended once, with the second worker's result; both bodies ran, the zombie's was refused. */
  async function tookOver(runId: string, log: string, first: ChildProcess, second: ChildProcess) {
    const graphs = graphsFor(log);
    const done = await within('the run ends', async () => {
      const run = await store.getRun(runId);
      return run?.status === 'succeeded' ? run : undefined;
    });
    expect(done.status).toBe('succeeded');
    const view = await inspect(store, graphs.zombie!, runId);
    expect(view.snapshot.state.who).toBe(String(second.pid));
    const completions = async () =>
      (await store.events(runId)).filter(
        (e) => e.event.includes('"completed"') && e.event.includes('"slow:1"'),
      );
    expect(await completions()).toHaveLength(1);
    // Both ran the body; only the second one's result counts.
    const ran = readFileSync(log, 'utf8')
      .trim()
      .split('\n')
      .filter((l) => l.startsWith(`${runId} slow:1 `));
    expect(ran.map((l) => Number(l.split(' ')[3])).sort()).toEqual([first.pid, second.pid].sort());
    await sleep(3_500); // the zombie's late result has been sent, and refused, by now
    expect(await completions()).toHaveLength(1);
    expect(await store.inbox(runId)).toEqual([]);
  }

  it('paused past its lease and continued: its late result is refused, another worker did the work', {
    timeout: 60_000,
  }, async () => {
    const log = join(work, 'executions.log');
    writeFileSync(log, '');
    const first = start(log, false);
    await enqueue(store, graphsFor(log).zombie!, {}, { runId: 'z' });
    const claimed = await within('the first worker claims the slow node', async () => {
      const [task] = await store.listTasks('z');
      return task?.owner.includes(`:${first.pid}:`) ? task : undefined;
    });
    first.kill('SIGSTOP'); // frozen mid-node: it can neither renew nor finish

    const second = start(log, false);
    const taken = await within('another worker takes the task over', async () => {
      const [task] = await store.listTasks('z');
      return task !== undefined &&
        task.epoch > claimed.epoch &&
        task.owner.includes(`:${second.pid}:`)
        ? task
        : undefined;
    });
    expect(taken.epoch).toBe(claimed.epoch + 1);
    first.kill('SIGCONT'); // the zombie wakes, its node returns, its result is refused
    await tookOver('z', log, first, second);
  });

  it('holding a run it runs itself, paused past the run lease: its late commit is refused, another worker ran the node', {
    timeout: 60_000,
  }, async () => {
    const log = join(work, 'executions-held.log');
    writeFileSync(log, '');
    const first = start(log, true);
    await enqueue(store, graphsFor(log).zombie!, {}, { runId: 'h' });
    // No task: the worker that folded the run's start runs its first node itself, under the
    // run's lease.
    const held = await within('the first worker holds the run and runs the slow node', async () => {
      const run = await store.getRun('h');
      const started = readFileSync(log, 'utf8').includes(`h slow:1 1 ${first.pid} `);
      return started && run?.lease?.owner.includes(`:${first.pid}:`) ? run.lease : undefined;
    });
    expect(await store.listTasks('h')).toEqual([]);
    first.kill('SIGSTOP');

    const second = start(log, true);
    const taken = await within('another worker takes the run over', async () => {
      const lease = (await store.getRun('h'))?.lease;
      return lease !== null &&
        lease !== undefined &&
        lease.epoch > held.epoch &&
        lease.owner.includes(`:${second.pid}:`)
        ? lease
        : undefined;
    });
    expect(taken.epoch).toBe(held.epoch + 1);
    first.kill('SIGCONT'); // the zombie's node returns; its commit is fenced by the old epoch
    await tookOver('h', log, first, second);
  });
});
