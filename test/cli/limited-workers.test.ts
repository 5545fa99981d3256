// `waymark worker` processes on one SQLite file keep a graph's concurrency limit between them:
// never more than two runs of one customer in their step at once, and every queued run starts.
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { enqueue } from '../../src/index.js';
import { SqliteStore } from '../../src/sqlite.js';
import limited from './fixtures/limited-workers/limited.js';
import { bin, fixture, sandbox, testTimeoutMs } from './support.js';

const children = new Set<ChildProcess>();
afterEach(() => {
  for (const child of children) child.kill('SIGKILL');
  children.clear();
});

interface Span {
  readonly runId: string;
  readonly customer: string;
  readonly start: number;
  readonly end: number;
}

/** The most spans of one customer that overlap at any instant. */
function mostAtOnce(spans: readonly Span[]): number {
  let most = 0;
  for (const s of spans) {
    const at = spans.filter((o) => o.start <= s.start && s.start < o.end).length;
    most = Math.max(most, at);
  }
  return most;
}

it('two waymark worker processes on one SQLite file run at most two runs of a customer at once', {
  timeout: testTimeoutMs,
}, async () => {
  const box = sandbox();
  const file = join(box.dir, 'runs.sqlite');
  const log = join(box.dir, 'spans.log');
  const store = new SqliteStore({ path: file });
  const ids: string[] = [];
  for (let i = 0; i < 6; i++)
    ids.push(await enqueue(store, limited, { customer: 'a' }, { runId: `a${i}` }));
  for (let i = 0; i < 2; i++)
    ids.push(await enqueue(store, limited, { customer: 'b' }, { runId: `b${i}` }));
  expect((await store.listQueued()).map((q) => q.runId)).toEqual(['a2', 'a3', 'a4', 'a5']);
  const start = () => {
    const child = spawn(
      process.execPath,
      [bin, '--store', file, 'worker', '--graphs', fixture('limited-workers'), '--poll-ms', '50'],
      {
        cwd: box.dir,
        env: { ...process.env, FIXTURE_LOG: log, FIXTURE_STEP_MS: '150' },
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    );
    children.add(child);
    child.on('exit', () => children.delete(child));
    return child;
  };
  start();
  start();
  try {
    const deadline = Date.now() + 40_000;
    while ((await store.listRuns({ status: 'succeeded' })).length < ids.length) {
      if (Date.now() > deadline) throw new Error('the runs did not all succeed');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  } finally {
    await store.close();
  }
  const spans = readFileSync(log, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Span);
  expect(spans).toHaveLength(8);
  expect(mostAtOnce(spans.filter((s) => s.customer === 'a'))).toBe(2);
  expect(mostAtOnce(spans.filter((s) => s.customer === 'b'))).toBeLessThanOrEqual(2);
});
