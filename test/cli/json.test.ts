// --json: every line of every command is checked against the JSON Schema docs/cli.md publishes
// (read from the docs themselves, so they cannot drift), and every line type the schema names
// is seen at least once.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { dropSchema, pgUrl, schemaName, skipReason, testPool } from '../store/fixtures/postgres.js';
import {
  bin,
  expectExit,
  fixture,
  type JsonLine,
  jsonLines,
  jsonOf,
  type Outcome,
  root,
  sandbox,
} from './support.js';

/** The one JSON Schema block of docs/cli.md's "JSON lines" section. */
function publishedSchema(): { $defs: Record<string, unknown>; oneOf: { $ref: string }[] } {
  const docs = readFileSync(join(root, 'docs', 'cli.md'), 'utf8');
  const section = docs.slice(docs.indexOf('### JSON lines'));
  const block = /```json\n([\s\S]*?)```/.exec(section)?.[1];
  expect(block, 'a ```json block under "### JSON lines" in docs/cli.md').toBeDefined();
  return JSON.parse(block!);
}

const schema = publishedSchema();
const lineTypes = schema.oneOf.map((r) => r.$ref.replace('#/$defs/', ''));
const validators = new Map(
  lineTypes.map((type) => [
    type,
    z.fromJSONSchema({ $ref: `#/$defs/${type}`, $defs: schema.$defs } as never),
  ]),
);

/** Enqueues two runs of fixtures/limited.ts for one customer: the second waits queued. */
async function queueTwo(db: string): Promise<void> {
  const { enqueue } = await import('../../src/index.js');
  const { SqliteStore } = await import('../../src/sqlite.js');
  const limited = (await import(fixture('limited.ts'))).default.compile();
  const store = new SqliteStore(db);
  try {
    await enqueue(store, limited, { customer: 'c' }, { runId: 'q1' });
    await enqueue(store, limited, { customer: 'c' }, { runId: 'q2' });
  } finally {
    await store.close();
  }
}

/** Every line of a run of the command, for the checks below. */
const seen: { readonly command: string; readonly line: JsonLine }[] = [];

function collect(command: string, out: Outcome): void {
  for (const line of jsonLines(out) as JsonLine[]) seen.push({ command, line });
}

/** Runs `waymark --json ...` in the sandbox and keeps every line it printed. */
async function json(
  box: ReturnType<typeof sandbox>,
  args: readonly string[],
  code: number,
  env: Record<string, string> = {},
): Promise<Outcome> {
  const out = await box.waymark(['--json', ...args], { env });
  expectExit(out, code);
  collect(args.join(' '), out);
  return out;
}

describe('waymark --json', () => {
  it('every line of every command matches its published schema, and every schema is seen', async () => {
    const box = sandbox();
    const review = fixture('review.ts');
    await json(box, ['validate', review], 0);
    await json(box, ['validate', fixture('warnings.ts')], 0);
    await json(box, ['validate', fixture('invalid.ts')], 1);
    await json(box, ['graph', review, '--format', 'dot'], 0);
    await json(box, ['run', review, '--input', '{"title":"T"}', '--run-id', 'w'], 3);
    await json(box, ['approve', 'w', '--by', 'ed'], 3);
    await json(box, ['show', 'w'], 0);
    await json(box, ['watch', 'w', '--no-follow', '--states'], 3);
    await json(box, ['answer', 'w', '--value', '{"stars":9}'], 2);
    await json(box, ['run', fixture('metered.ts'), '--run-id', 'm'], 0);
    await json(box, ['run', fixture('flaky.ts'), '--run-id', 'f'], 1, { FIXTURE_FAIL: '1' });
    await json(box, ['resume', 'f', '--plan'], 0);
    await json(box, ['resume', 'f'], 0);
    await json(box, ['rewind', 'f', '--to', 'work', '--plan'], 0);
    await json(box, ['watch', 'f'], 0);
    await json(box, ['show', 'f', '--at', '2', '--diff'], 0);
    await json(box, ['continue', 'm', '--input', '{}', '--run-id', 'm2'], 0);
    await json(box, ['ls', '--thread', 'm'], 0);
    await json(box, ['run', fixture('caused.ts'), '--run-id', 'c'], 1);
    await json(box, ['show', 'c'], 0);
    await json(box, ['run', fixture('beating.ts'), '--run-id', 'hb'], 1);
    await json(box, ['show', 'hb'], 0);
    await json(box, ['trace', 'c'], 0);
    await json(box, ['trace', 'f'], 0);
    await json(box, ['rewind', 'f', '--to', 'work', '--run-id', 'f2'], 0);
    await json(box, ['run', fixture('capped.ts'), '--run-id', 'cap'], 1);
    await json(box, ['run', fixture('review.ts'), '--input', '{"title":"T"}', '--run-id', 'x'], 3);
    await json(box, ['patch', 'x', '--set', '{"title":"U"}', '--reason', 'retitled'], 0);
    await json(box, ['cancel', 'x'], 0);
    await json(box, ['rm', 'x'], 0);
    await json(box, ['prune', '--status', 'succeeded', '--older-than', '0s', '--dry-run'], 0);
    await json(box, ['prune', '--status', 'cancelled,failed', '--older-than', '1d'], 0);
    await json(box, ['run', fixture('cached.ts'), '--run-id', 'k'], 0);
    await json(box, ['clear-cache', fixture('cached.ts')], 0);
    // Two runs of one customer under a limit of one: the second is queued.
    await queueTwo(box.db);
    const listed = jsonOf(await json(box, ['ls'], 0), 'runs').runs as { runId: string }[];
    expect(listed.find((r) => r.runId === 'q2')).toMatchObject({
      status: 'waiting',
      queued: { graph: 'limited', key: 'c', concurrency: 1, position: 1 },
    });
    expect(jsonOf(await json(box, ['show', 'q2'], 0), 'run')).toMatchObject({
      status: 'waiting',
      live: null,
      queued: { key: 'c', position: 1 },
    });
    await json(box, ['ls'], 0);
    await json(
      box,
      [
        'schedule',
        'add',
        review,
        '--cron',
        '0 9 * * *',
        '--input',
        '{"title":"T"}',
        '--id',
        'daily',
      ],
      0,
    );
    await json(box, ['schedule', 'pause', 'daily'], 0);
    await json(box, ['schedule', 'resume', 'daily'], 0);
    await json(box, ['schedule', 'ls'], 0);
    await json(box, ['schedule', 'rm', 'daily'], 0);
    await json(box, ['schedule', 'rm', 'daily'], 2);
    const orders = fixture('orders.ts');
    await json(box, ['signal', '--graph', orders, '--key', 'o-1', 'payment', '{"paidCents":5}'], 0);
    await json(box, ['signals'], 0);
    await json(box, ['run', orders, '--input', '{"orderId":"o-2"}', '--run-id', 'ev'], 3);
    await json(box, ['show', 'ev'], 0);
    await json(box, ['signal', 'ev', 'payment', '{"paidCents":7}', '--id', 'evt'], 0);
    await json(box, ['signals', '--all'], 0);
    await json(box, ['coverage', review, '--min', '100'], 0);
    await json(box, ['coverage', review, '--min', '100', '--kinds', 'wait'], 1);
    await json(box, ['run', fixture('sleepy.ts'), '--run-id', 'zz'], 3);
    await json(box, ['show', 'zz'], 0);
    await json(box, ['resume', 'zz'], 2);
    await json(box, ['run', fixture('expiring.ts'), '--run-id', 'ex'], 3, {
      FIXTURE_TIMEOUT_MS: '86400000',
    });
    await json(box, ['show', 'ex'], 0);
    await json(box, ['show', 'nope'], 2);
    collect('run slow.ts (interrupted)', await interrupted(box.db, box.dir));
    collect('serve (stopped)', await served(box.db, box.dir));
    collect('ui (stopped)', await served(box.db, box.dir, 'ui'));
    if (skipReason === undefined) await workerLines(box);

    const problems: string[] = [];
    for (const { command, line } of seen) {
      const validator = validators.get(line.type);
      if (validator === undefined) {
        problems.push(`${command}: a line of type ${JSON.stringify(line.type)} has no schema`);
        continue;
      }
      const parsed = validator.safeParse(line);
      if (!parsed.success) {
        const why = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
        problems.push(`${command}: ${line.type}: ${why}\n  ${JSON.stringify(line)}`);
      }
    }
    expect(problems).toEqual([]);
    // A worker's error line needs a database that fails under it: test/workers pins the worker's
    // behaviour then. Without PostgreSQL (never in CI) the worker's lines cannot be made at all.
    const unseen = new Set(['worker-error']);
    if (skipReason !== undefined && process.env.CI !== 'true') {
      for (const type of lineTypes)
        if (type.startsWith('worker-') || type === 'run-enqueued') unseen.add(type);
    }
    expect([...new Set(seen.map((s) => s.line.type))].sort()).toEqual(
      lineTypes.filter((t) => !unseen.has(t)).sort(),
    );
  }, 180_000);

  it('the whole document accepts a line of any type and refuses one of none', () => {
    const any = z.fromJSONSchema(schema as never);
    expect(any.safeParse({ type: 'cancelled', runId: 'r', status: 'cancelled' }).success).toBe(
      true,
    );
    expect(any.safeParse({ type: 'cancelled', id: 'r', status: 'cancelled' }).success).toBe(false);
    expect(any.safeParse({ runId: 'r' }).success).toBe(false);
  });
});

/** `run --json` of a slow graph, stopped with Ctrl-C in the middle of its second step. */
function interrupted(db: string, cwd: string): Promise<Outcome> {
  return new Promise((resolve) => {
    const child = spawn(
      process.execPath,
      [bin, '--db', db, '--json', 'run', fixture('slow.ts'), '--run-id', 'i'],
      { cwd, env: { ...process.env, FIXTURE_STEP_MS: '1000' } },
    );
    let stdout = '';
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      if (stdout.includes('"activation":"two:1"')) child.kill('SIGINT');
    });
    child.on('exit', () => {
      const lines = stdout.split('\n').filter((l) => l.trim() !== '');
      resolve({ code: 130, stdout, stderr, lines, errLines: [] });
    });
  });
}

/**
 * `waymark --json serve` (or `ui`) until its first line, asked once over HTTP, then stopped
 * with SIGTERM.
 */
function served(db: string, cwd: string, command: 'serve' | 'ui' = 'serve'): Promise<Outcome> {
  return new Promise((resolve) => {
    const child = spawn(
      process.execPath,
      [
        bin,
        '--db',
        db,
        '--json',
        command,
        '--graphs',
        fixture('review.ts'),
        ...(command === 'ui' ? ['--no-open'] : []),
      ],
      {
        cwd,
        env: { ...process.env, WAYMARK_TOKEN: 'json-test' },
      },
    );
    let stdout = '';
    let asked = false;
    child.stdout.on('data', async (chunk: Buffer) => {
      stdout += chunk.toString();
      const first = stdout.split('\n')[0];
      if (asked || !stdout.includes('\n') || first === undefined) return;
      asked = true;
      const { url, api } = JSON.parse(first) as { url: string; api?: string };
      await fetch(`${api ?? url}/graphs`, { headers: { authorization: 'Bearer json-test' } });
      child.kill('SIGTERM');
    });
    child.on('exit', (code) => {
      const lines = stdout.split('\n').filter((l) => l.trim() !== '');
      resolve({ code: code ?? 1, stdout, stderr: '', lines, errLines: [] });
    });
  });
}

/**
 * The lines of `run --enqueue` (with and without --wait) and of a worker that runs them, on a
 * PostgreSQL schema of this test's own: the worker is stopped with SIGTERM, and one of its tasks
 * is cancelled under it first, so it loses that task.
 */
async function workerLines(box: ReturnType<typeof sandbox>): Promise<void> {
  const schema = schemaName();
  const store = `${pgUrl}${pgUrl.includes('?') ? '&' : '?'}schema=${schema}`;
  const pool = testPool();
  const graphs = fixture('worker');
  let worker: ReturnType<typeof spawn> | undefined;
  try {
    await json(
      box,
      ['--store', store, 'run', join(graphs, 'slow.ts'), '--enqueue', '--run-id', 'q'],
      0,
    );
    worker = spawn(
      process.execPath,
      [
        bin,
        '--store',
        store,
        '--json',
        'worker',
        '--graphs',
        graphs,
        '--lease-ms',
        '1000',
        '--poll-ms',
        '50',
      ],
      { cwd: box.dir, env: { ...process.env, FIXTURE_STEP_MS: '5000' } },
    );
    let stdout = '';
    worker.stdout?.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    const ended = new Promise((resolve) => worker?.on('exit', resolve));
    // Once its first node runs, the run is cancelled under it: the worker loses that task.
    for (let i = 0; i < 200 && !stdout.includes('"worker-folded"'); i++)
      await new Promise((r) => setTimeout(r, 25));
    await json(box, ['--store', store, 'cancel', 'q'], 0);
    for (let i = 0; i < 200 && !stdout.includes('"worker-lost"'); i++)
      await new Promise((r) => setTimeout(r, 25));
    await json(
      box,
      ['--store', store, 'run', join(graphs, 'quick.ts'), '--enqueue', '--wait', '--run-id', 'w2'],
      0,
    );
    await json(box, ['--store', store, 'ls'], 0);
    worker.kill('SIGTERM');
    await ended;
    const lines = stdout.split('\n').filter((l) => l.trim() !== '');
    collect('worker', { code: 0, stdout, stderr: '', lines, errLines: [] });
  } finally {
    // A failed step above must not leave the worker polling a dropped schema forever.
    if (worker !== undefined && worker.exitCode === null && worker.signalCode === null)
      worker.kill('SIGKILL');
    await dropSchema(pool, schema);
    await pool.end();
  }
}
