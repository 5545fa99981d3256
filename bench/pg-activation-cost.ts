// What one activation costs the PostgreSQL database: statements, round trips, bytes on the
// wire, WAL bytes and table bytes, for N runs of a short chain driven by one in-process host
// (`run()`, one run after another) and by one worker (`enqueueAll`, then a `Worker`).
//
//   node --import tsx bench/pg-activation-cost.ts            N=400 runs of a 5-node chain
//   node --import tsx bench/pg-activation-cost.ts --quick    N=40: a smoke test, not numbers
//
// The WAL counters (pg_stat_wal) and pg_stat_database are the whole server's, so the script
// starts a PostgreSQL server of its own (initdb in a temporary directory, a free port, the
// installed server's binaries: WAYMARK_PG_BIN, default /usr/lib/postgresql/15/bin) with the
// default durability (fsync, synchronous_commit, full_page_writes on), and removes it at the
// end. With WAYMARK_PG_URL it measures that server instead: then other sessions' work is in
// the WAL and transaction counts. Client-side counts (statements, round trips, bytes) are
// the store's own connections, by application_name. Printed, never asserted.

import pg from 'pg';
import { z } from 'zod';
import { END, enqueueAll, type GraphBuilder, graph, run, Worker } from '../src/index.js';
import { PostgresStore } from '../src/postgres.js';
import { startThrowawayPostgres } from '../test/support/throwaway-postgres.js';

const quick = process.argv.includes('--quick');
const runs = quick ? 40 : 400;
const nodes = 5;

const chain = (() => {
  let b = graph('cost-chain', { state: z.object({ n: z.number().default(0) }) }) as GraphBuilder<
    { n: number },
    string
  >;
  for (let i = 0; i < nodes; i++) b = b.node(`n${i}`, (s) => ({ n: s.n + 1 }));
  for (let i = 0; i < nodes - 1; i++) b = b.edge(`n${i}`, `n${i + 1}`);
  return b
    .edge(`n${nodes - 1}`, END)
    .entry('n0')
    .compile();
})();
/** The input: `n` is left to its default, 0. */
const input = {} as { n: number };

// Every query a client makes, counted per application_name (each store's connection string
// names its own): a query is one round trip (node-postgres sends parse, bind, execute and sync
// together), and one statement unless it is a multi-statement string (the planner's SETs at
// connect, counted as one round trip and six statements).
interface Tally {
  queries: number;
  statements: number;
}
const tallies = new Map<string, Tally>();
const sockets = new Map<string, Set<{ bytesWritten: number; bytesRead: number }>>();
const originalQuery = pg.Client.prototype.query;
pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
  const name = (this as unknown as { connectionParameters: { application_name?: string } })
    .connectionParameters.application_name;
  const key = name ?? '?';
  const tally = tallies.get(key) ?? { queries: 0, statements: 0 };
  tallies.set(key, tally);
  tally.queries++;
  const first = args[0];
  const text = typeof first === 'string' ? first : (first as { text?: string })?.text;
  tally.statements += typeof text === 'string' ? Math.max(1, text.split(';').length - 1) : 1;
  const stream = (this as unknown as { connection?: { stream?: unknown } }).connection?.stream;
  if (stream !== undefined) {
    const set = sockets.get(key) ?? new Set();
    sockets.set(key, set);
    set.add(stream as { bytesWritten: number; bytesRead: number });
  }
  // biome-ignore lint/suspicious/noExplicitAny: forwarding every overload of query
  return (originalQuery as any).apply(this, args);
} as typeof pg.Client.prototype.query;

function wire(key: string): { out: number; in: number } {
  let out = 0;
  let inbound = 0;
  for (const s of sockets.get(key) ?? []) {
    out += s.bytesWritten;
    inbound += s.bytesRead;
  }
  return { out, in: inbound };
}

const server = process.env.WAYMARK_PG_URL
  ? undefined
  : await startThrowawayPostgres({
      fsync: 'on',
      synchronous_commit: 'on',
      full_page_writes: 'on',
    });
const base = process.env.WAYMARK_PG_URL ?? (server as { url: string }).url;
const admin = new pg.Pool({ connectionString: base, max: 1, application_name: 'bench-admin' });
admin.on('error', () => {});

function urlFor(app: string): string {
  const url = new URL(base);
  url.searchParams.set('application_name', app);
  return url.toString();
}

interface Counters {
  walBytes: number;
  walRecords: number;
  walFpi: number;
  xacts: number;
}

/** The admin's own transactions between two readings of the counters, left out of them. */
let adminXacts = 0;

async function counters(): Promise<Counters> {
  const { rows } = await admin.query(
    `SELECT w.wal_bytes::float8 AS wal_bytes, w.wal_records::float8 AS wal_records,
            w.wal_fpi::float8 AS wal_fpi,
            (d.xact_commit + d.xact_rollback)::float8 AS xacts
     FROM pg_stat_wal w, pg_stat_database d WHERE d.datname = current_database()`,
  );
  const r = rows[0];
  return {
    walBytes: r.wal_bytes,
    walRecords: r.wal_records,
    walFpi: r.wal_fpi,
    xacts: r.xacts,
  };
}

async function tableBytes(schema: string): Promise<number> {
  const { rows } = await admin.query(
    `SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::float8 AS bytes
     FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname = $1 AND c.relkind = 'r'`,
    [schema],
  );
  return rows[0].bytes;
}

/** Statistics are flushed by each backend at the end of its transactions, at most every 1 s. */
async function settled(): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, 1_100));
  await admin.query('SELECT pg_stat_clear_snapshot()');
}

function row(label: string, value: number, per: number, digits = 2): string {
  return `  ${label.padEnd(34)} ${String(Math.round(value)).padStart(10)}   ${(value / per).toFixed(digits).padStart(9)} per activation`;
}

async function measure(
  what: string,
  apps: readonly string[],
  body: (schema: string) => Promise<void>,
): Promise<void> {
  const schema = `cost_${what.replace(/\W/g, '_')}`;
  // The schema exists and is empty before the counters start; setup is not counted.
  const setup = new PostgresStore({ connectionString: urlFor('bench-setup'), schema });
  await setup.listRuns({ limit: 1 });
  await setup.close();
  const tablesBefore = await tableBytes(schema);
  await settled();
  const before = await counters();
  adminXacts = 0;
  const start = new Map(
    apps.map((app) => [
      app,
      { ...(tallies.get(app) ?? { queries: 0, statements: 0 }), ...wire(app) },
    ]),
  );
  const t0 = performance.now();
  await body(schema);
  const ms = performance.now() - t0;
  await settled();
  const after = await counters();
  const activations = runs * nodes;
  let queries = 0;
  let statements = 0;
  let out = 0;
  let inbound = 0;
  for (const app of apps) {
    const s = start.get(app) as Tally & { out: number; in: number };
    const t = tallies.get(app) ?? { queries: 0, statements: 0 };
    const w = wire(app);
    queries += t.queries - s.queries;
    statements += t.statements - s.statements;
    out += w.out - s.out;
    inbound += w.in - s.in;
  }
  const tables = (await tableBytes(schema)) - tablesBefore;
  console.log(
    `\n${what}: ${runs} runs x ${nodes} nodes = ${activations} activations in ${(ms / 1000).toFixed(1)} s (${Math.round(activations / (ms / 1000))}/s)`,
  );
  console.log(row('round trips (client queries)', queries, activations));
  console.log(row('statements sent', statements, activations));
  console.log(
    row('server transactions (whole db)', after.xacts - before.xacts - 2 - adminXacts, activations),
  );
  console.log(row('bytes sent to the server', out, activations, 0));
  console.log(row('bytes received from it', inbound, activations, 0));
  console.log(row('WAL bytes', after.walBytes - before.walBytes, activations, 0));
  console.log(row('WAL records', after.walRecords - before.walRecords, activations));
  console.log(row('WAL full-page images', after.walFpi - before.walFpi, activations));
  console.log(row('table bytes (with indexes, TOAST)', tables, activations, 0));
  await admin.query(`DROP SCHEMA ${schema} CASCADE`);
}

try {
  const version = (await admin.query('SHOW server_version')).rows[0].server_version;
  console.log(
    `PostgreSQL ${version} ${server ? '(a server of its own)' : `at ${base.replace(/:[^:@/]*@/, ':***@')}`}, Node.js ${process.version}`,
  );

  await measure('in-process host', ['bench-host', 'waymark-listen'], async (schema) => {
    const store = new PostgresStore({ connectionString: urlFor('bench-host'), schema });
    for (let i = 0; i < runs; i++) await run(chain, input, { store });
    await store.close();
  });

  await measure(
    'one worker',
    ['bench-enqueue', 'bench-worker', 'waymark-listen'],
    async (schema) => {
      const client = new PostgresStore({ connectionString: urlFor('bench-enqueue'), schema });
      const store = new PostgresStore({ connectionString: urlFor('bench-worker'), schema });
      const stop = new AbortController();
      const worker = new Worker(store, [chain], { pollMs: 1_000 });
      const working = worker.run(stop.signal);
      await enqueueAll(
        client,
        chain,
        Array.from({ length: runs }, () => input),
      );
      // Waits on the admin pool (not counted) for every run to end.
      for (;;) {
        const { rows } = await admin.query(
          `SELECT count(*)::int AS left FROM ${schema}.runs WHERE status = 'running'`,
        );
        adminXacts++;
        if (rows[0].left === 0) break;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      stop.abort();
      await working;
      await Promise.all([client.close(), store.close()]);
    },
  );
} finally {
  await admin.end();
  server?.destroy();
}
