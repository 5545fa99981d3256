// A run workers are busy with holds no lease of its own between folds: its node bodies run as
// tasks under the tasks' leases. `show` and `ls` say who works on it (the workers holding its
// tasks), that it is queued when no worker of its graph is alive, and interrupted only when
// nothing would move it on: on a SQLite file and on PostgreSQL alike (issue 30, point 4).
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { enqueue } from '../../src/index.js';
import { PostgresStore } from '../../src/postgres.js';
import { SqliteStore } from '../../src/sqlite.js';
import type { Store } from '../../src/store/store.js';
import type { WorkQueue } from '../../src/store/work-queue.js';
import { dropSchema, pgUrl, schemaName, skipReason, testPool } from '../store/fixtures/postgres.js';
import { describeNeeding } from '../support/needs.js';
import chain from './fixtures/sqlite-workers/chain.js';
import { bin, fixture, jsonLines, sandbox, testTimeoutMs } from './support.js';

const children = new Set<ChildProcess>();
afterEach(() => {
  for (const child of children) child.kill('SIGKILL');
  children.clear();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until(what: string, ok: () => boolean | Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!(await ok())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

interface Shown {
  readonly live: boolean | null;
  readonly text: string;
  readonly listed: { readonly live: boolean | null; readonly line: string };
}

/** The whole session on the store at `location`, whose library handle `open` makes. */
async function session(location: string, open: () => Promise<Store & WorkQueue>) {
  const box = sandbox();
  const log = join(box.dir, 'executions.log');
  const store = await open();
  const call = (args: string[]) => box.waymark(['--store', location, ...args], { noDb: true });
  // The run was enqueued by the library, so it records no graph file: show is given it.
  const graphFile = fixture('sqlite-workers/chain.ts');
  const look = async (runId: string): Promise<Shown> => {
    const json = jsonLines(await call(['--json', 'show', runId, '--graph', graphFile]))[0] as {
      live: boolean | null;
    };
    const text = (await call(['show', runId, '--graph', graphFile])).lines.filter((l) =>
      /^(status|owner)/.test(l),
    );
    const listedJson = jsonLines(await call(['--json', 'ls'])) as {
      runs: { runId: string; live: boolean | null }[];
    }[];
    const row = listedJson[0]!.runs.find((r) => r.runId === runId)!;
    const line = (await call(['ls'])).lines.find((l) => l.startsWith(`${runId} `))!;
    return { live: json.live, text: text.join('\n'), listed: { live: row.live, line } };
  };
  try {
    await enqueue(store, chain, {}, { runId: 'busy' });
    // Enqueued, and no worker yet: it waits for one.
    const queued = await look('busy');

    const worker = spawn(
      process.execPath,
      [
        bin,
        '--store',
        location,
        'worker',
        '--graphs',
        fixture('sqlite-workers'),
        '--lease-ms',
        '1000',
      ],
      {
        cwd: box.dir,
        env: {
          ...process.env,
          FIXTURE_LOG: log,
          FIXTURE_STEP_MS: '20',
          FIXTURE_BRANCH_MS: '60000',
        },
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    );
    children.add(worker);
    await until(
      'the first body to start',
      () => existsSync(log) && readFileSync(log, 'utf8').length > 0,
    );
    const working = await look('busy');

    const gone = new Promise((resolve) => worker.once('exit', resolve));
    worker.kill('SIGKILL');
    await gone;
    // Its registration and its task's lease lapse (1 s lease): the task waits for a worker.
    await until('the worker to be gone', async () => (await look('busy')).live === false);
    const orphaned = await look('busy');
    return { queued, working, orphaned, pid: worker.pid! };
  } finally {
    await store.close();
  }
}

function expectSession(s: Awaited<ReturnType<typeof session>>): void {
  expect(s.queued.live).toBe(false);
  expect(s.queued.text).toMatch(/^status {3}queued after \d+ step/);
  expect(s.queued.text).toMatch(
    /owner {4}queued: 1 item\(s\) wait for a worker, and no live worker runs graph sqlite-chain/,
  );
  expect(s.queued.listed.live).toBe(false);
  expect(s.queued.listed.line).toMatch(/^busy {2}queued /);

  // The case the issue names: it read "interrupted: no process drives it".
  expect(s.working.live).toBe(true);
  expect(s.working.text).toMatch(/^status {3}running after/);
  expect(s.working.text).toMatch(
    new RegExp(
      `owner {4}worked on by workers: 3 task\\(s\\) held by \\S+ on \\S+ \\(pid ${s.pid}\\)`,
    ),
  );
  expect(s.working.text).not.toMatch(/interrupted/);
  expect(s.working.listed.live).toBe(true);
  expect(s.working.listed.line).toMatch(/^busy {2}running /);

  expect(s.orphaned.text).toMatch(/^status {3}queued after/);
  expect(s.orphaned.listed.line).toMatch(
    /^busy {2}queued .*no live worker runs graph sqlite-chain/,
  );
}

describe('who works on a run that workers run', () => {
  it('on a SQLite file: queued, worked on by the worker holding its task, queued again once it is gone', {
    timeout: testTimeoutMs * 2,
  }, async () => {
    const file = join(sandbox().dir, 'runs.sqlite');
    expectSession(await session(file, async () => new SqliteStore({ path: file })));
  });
});

describeNeeding('PostgreSQL', skipReason)(
  'who works on a run that workers run, on PostgreSQL',
  () => {
    it('is told the same way as on SQLite', { timeout: testTimeoutMs * 2 }, async () => {
      const schema = schemaName();
      const pool = testPool();
      const location = `${pgUrl}${pgUrl.includes('?') ? '&' : '?'}schema=${schema}`;
      try {
        expectSession(
          await session(
            location,
            async () => new PostgresStore({ connectionString: pgUrl, schema }),
          ),
        );
      } finally {
        await dropSchema(pool, schema);
        await pool.end();
      }
    });
  },
);
