import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { chownSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Io } from '../../src/cli/io.js';
import { openStore } from '../../src/cli/session.js';
import { enqueue, type StreamEvent, Worker, watch } from '../../src/index.js';
import { PostgresStore } from '../../src/postgres.js';
import { type Served, serve } from '../../src/server.js';
import { plannerSettings } from '../../src/store/internal/pg-planner.js';
import { dropSchema, pgUrl, schemaName, skipReason, testPool } from '../store/fixtures/postgres.js';
import { describeNeeding } from '../support/needs.js';
import { fanGraph, sleep } from './fixtures/fan.js';

// waymark behind PgBouncer in transaction mode (pool_mode = transaction), Debian's pgbouncer
// started here on a free port in front of the test server. Such a pooler hands each
// transaction to any of its server connections and keeps no session: it refuses the
// statement_timeout startup parameter node-postgres sends for the store's deadlines, a named
// prepared statement is unknown on the next server connection, and no LISTEN outlives a
// transaction. With `transactionPooling: true` the store sends unnamed statements and sets
// nothing per session; the server's settings come from the pooler's connect_query, as
// docs/stores.md gives it. Through it: workers run enqueued runs while a watcher follows one to
// its end, `serve` starts a run over HTTP, drives it to its end and streams it (SSE), and the
// command line's store opens with ?pooling=transaction.

const bin = ['/usr/sbin/pgbouncer', '/usr/bin/pgbouncer'].find((path) => {
  try {
    execFileSync(path, ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
});
const root = process.getuid?.() === 0;
const reason =
  skipReason ??
  (bin === undefined ? 'pgbouncer is not installed (apt-get install pgbouncer)' : undefined);
const describeBouncer = describeNeeding('PgBouncer', reason);

/** A port nobody listens on now. */
async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** The server's own settings, which the store sets on its connections when it is not pooled. */
const connectQuery = `SET statement_timeout = 2000; SET idle_in_transaction_session_timeout = 10000; ${plannerSettings}`;

const schema = schemaName();
const fan = fanGraph('bouncer-fan', 4, sleep(20));
let dir: string;
let bouncer: ChildProcess | undefined;
let bouncerLog = '';
let bouncerUrl: string;
const opened: PostgresStore[] = [];

/** A store that reaches the database through PgBouncer. */
function pooledStore(options: { readonly transactionPooling?: boolean } = {}): PostgresStore {
  const store = new PostgresStore({
    connectionString: bouncerUrl,
    schema,
    poolSize: 4,
    connectTimeoutMs: 3_000,
    transactionPooling: options.transactionPooling ?? true,
  });
  opened.push(store);
  return store;
}

beforeAll(async () => {
  if (reason !== undefined) return;
  const target = new URL(pgUrl);
  const user = decodeURIComponent(target.username || 'postgres');
  const password = decodeURIComponent(target.password);
  const port = await freePort();
  dir = mkdtempSync(join(tmpdir(), 'waymark-pgbouncer-'));
  const server = [
    `host=${target.hostname}`,
    `port=${target.port || 5432}`,
    `dbname=${target.pathname.slice(1) || 'postgres'}`,
    ...(password ? [`password=${password}`] : []),
    `connect_query='${connectQuery}'`,
  ].join(' ');
  writeFileSync(
    join(dir, 'pgbouncer.ini'),
    [
      '[databases]',
      `waymark = ${server}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      'unix_socket_dir =',
      'auth_type = trust',
      `auth_file = ${join(dir, 'users.txt')}`,
      'pool_mode = transaction',
      'default_pool_size = 8',
      'max_client_conn = 200',
      '',
    ].join('\n'),
  );
  writeFileSync(join(dir, 'users.txt'), `"${user}" ""\n`);
  // PgBouncer refuses to run as root: under root it drops to the postgres OS user.
  if (root) {
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
    for (const file of ['', 'pgbouncer.ini', 'users.txt']) chownSync(join(dir, file), uid, gid);
  }
  const child = spawn(
    bin as string,
    [...(root ? ['-u', 'postgres'] : []), join(dir, 'pgbouncer.ini')],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  bouncer = child;
  child.stdout?.on('data', (chunk) => {
    bouncerLog += chunk;
  });
  child.stderr?.on('data', (chunk) => {
    bouncerLog += chunk;
  });
  bouncerUrl = `postgres://${encodeURIComponent(user)}@127.0.0.1:${port}/waymark`;
  for (let tries = 0; ; tries++) {
    const client = new pg.Client({ connectionString: bouncerUrl, connectionTimeoutMillis: 1_000 });
    client.on('error', () => {});
    try {
      await client.connect();
      await client.query('SELECT 1');
      await client.end();
      break;
    } catch (error) {
      await client.end().catch(() => {});
      if (tries > 50 || child.exitCode !== null) {
        throw new Error(`pgbouncer did not start: ${(error as Error).message}\n${bouncerLog}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}, 15_000);

afterAll(async () => {
  if (reason !== undefined) return;
  await Promise.all(opened.map((store) => store.close().catch(() => {})));
  if (bouncer !== undefined && bouncer.exitCode === null) {
    const exited = new Promise((resolve) => bouncer?.once('exit', resolve));
    bouncer.kill('SIGTERM');
    await exited;
  }
  rmSync(dir, { recursive: true, force: true });
  const pool = testPool();
  await dropSchema(pool, schema);
  await pool.end();
});

/** Waits until every run of `ids` has succeeded on `store`. */
async function succeeded(store: PostgresStore, ids: readonly string[]): Promise<void> {
  const until = Date.now() + 15_000;
  for (;;) {
    const runs = await Promise.all(ids.map((id) => store.getRun(id)));
    if (runs.every((run) => run?.status === 'succeeded')) return;
    for (const run of runs) expect(['running', 'succeeded']).toContain(run?.status);
    if (Date.now() > until) throw new Error(`runs did not finish:\n${bouncerLog}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

it('refuses, with transactionPooling, the settings a transaction pooler does not keep', () => {
  const refused = (options: Record<string, unknown>, says: string) =>
    expect(() => new PostgresStore({ transactionPooling: true, ...options })).toThrowError(
      expect.objectContaining({ code: 'OPTIONS_INVALID', message: expect.stringContaining(says) }),
    );
  refused({ notify: true }, 'LISTEN');
  refused({ statementTimeoutMs: 1_000 }, 'connect_query');
  refused({ idleInTransactionTimeoutMs: 1_000 }, 'session settings');
});

describeBouncer('PostgreSQL behind PgBouncer in transaction mode', () => {
  it('refuses the store without transactionPooling: PgBouncer rejects its statement_timeout', async () => {
    const store = pooledStore({ transactionPooling: false });
    await expect(store.listRuns({ limit: 1 })).rejects.toMatchObject({
      code: 'STORE_UNAVAILABLE',
      message: expect.stringContaining('unsupported startup parameter: statement_timeout'),
    });
  });

  it("sets up the schema through it, and the server's settings come from connect_query", async () => {
    const store = pooledStore();
    expect(await store.listRuns({ limit: 1 })).toEqual([]);
    const client = new pg.Client({ connectionString: bouncerUrl });
    await client.connect();
    try {
      const shown = async (name: string) =>
        (await client.query(`SHOW ${name}`)).rows[0]?.[name] as string;
      expect(await shown('statement_timeout')).toBe('2s');
      expect(await shown('enable_seqscan')).toBe('off');
      expect(await shown('jit')).toBe('off');
    } finally {
      await client.end();
    }
  });

  it('workers on two stores run enqueued runs while a watcher follows one to its end', async () => {
    const client = pooledStore();
    const ids = await Promise.all(
      Array.from({ length: 8 }, (_, i) => enqueue(client, fan, {}, { runId: `bounced-${i}` })),
    );
    const watcher = pooledStore();
    const seen: StreamEvent[] = [];
    const watching = (async () => {
      for await (const event of watch(watcher, fan, ids[0] as string, { pollMs: 50 })) {
        seen.push(event);
      }
    })();
    const stop = new AbortController();
    const workers = [pooledStore(), pooledStore()].map((store) =>
      new Worker(store, [fan], { pollMs: 50, leaseMs: 10_000 }).run(stop.signal),
    );
    try {
      await succeeded(client, ids);
      await watching;
    } finally {
      stop.abort();
      await Promise.all(workers);
    }
    for (const id of ids) {
      const loaded = await client.loadRun(id);
      expect(loaded?.run.status).toBe('succeeded');
    }
    expect(seen.at(-1)).toMatchObject({ type: 'run', status: 'succeeded' });
    // split, the four items of work, done
    expect(seen.filter((e) => e.type === 'activation.completed').length).toBe(6);
  }, 20_000);

  it('serve starts a run over HTTP and drives it to its end', async () => {
    const store = pooledStore();
    let served: Served | undefined;
    try {
      served = await serve({ store, graphs: [fan], token: 'tok' });
      const headers = { authorization: 'Bearer tok', 'content-type': 'application/json' };
      const started = await fetch(`${served.url}/runs`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ graph: fan.name, input: {}, runId: 'served-1' }),
      });
      expect(started.status).toBe(202);
      await succeeded(store, ['served-1']);
      const shown = await fetch(`${served.url}/runs/served-1`, { headers });
      const body = (await shown.json()) as { status: string; state: { out: number[] } };
      expect(body.status).toBe('succeeded');
      expect(body.state.out).toEqual([0, 1, 2, 3]);
      // Its SSE stream, a watcher the server keeps on the same store, read to the run's end.
      const stream = await fetch(`${served.url}/runs/served-1/events?until=end`, { headers });
      const text = await stream.text();
      expect(text.match(/^event: activation\.completed$/gm)?.length).toBe(6);
      expect(text).toMatch(/"status":"succeeded"/);
    } finally {
      await served?.close();
    }
  });

  it('the command line opens it with ?pooling=transaction, its statement deadline left to the pooler', async () => {
    const location = `${bouncerUrl}?schema=${schema}&pooling=transaction`;
    const io = { flags: { db: location } } as unknown as Io;
    const store = await openStore(io, 'existing', {
      statementTimeoutMs: 1_000,
      queryTimeoutMs: 1_500,
    });
    opened.push(store as PostgresStore);
    expect((await store.getRun('served-1'))?.status).toBe('succeeded');
  });
});
