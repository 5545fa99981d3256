// What one durable step costs in the PostgreSQL store, against the floor: a bare one-row
// INSERT round trip on the same server, through the same driver, one connection each.
//
//   node --import tsx bench/postgres-commit.ts            N=2000, 7 repetitions
//   node --import tsx bench/postgres-commit.ts --quick    N=200, 3 repetitions: a smoke test
//
// WAYMARK_PG_URL names the server (default postgres://postgres@127.0.0.1:5432/test). The
// benchmark works in a schema of its own and drops it at the end. Kinds, alternated:
//   select-1   SELECT 1: a round trip that writes nothing
//   insert     INSERT of one row shaped like an event (prepared, autocommit): the floor
//   commit     PostgresStore.commit of a small event, no snapshot (most steps)
//   commit+    the same with a wait opened and a timer set (the all-in-one statement)
// Warm-up by time, then the median of the repetitions per operation. Printed, never asserted.

import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { PostgresStore } from '../src/postgres.js';

const quick = process.argv.includes('--quick');
const operations = quick ? 200 : 2_000;
const repetitions = quick ? 3 : 7;
const warmUpMs = quick ? 300 : 3_000;
const url = process.env.WAYMARK_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const schema = `waymark_bench_${randomBytes(4).toString('hex')}`;

const kinds = ['select-1', 'insert', 'commit', 'commit+'] as const;
type Kind = (typeof kinds)[number];

const floor = new pg.Pool({ connectionString: url, max: 1 });
floor.on('error', () => {});
const store = new PostgresStore({ connectionString: url, schema, poolSize: 1 });
let runs = 0;

function event(seq: number): string {
  return `{"type":"completed","activation":"step:${seq}","update":{"count":${seq}}}`;
}

/** One repetition of a kind; returns microseconds per operation. */
async function repetition(kind: Kind): Promise<number> {
  const runId = `run-${++runs}`;
  if (kind === 'commit' || kind === 'commit+') {
    await store.createRun({
      id: runId,
      graph: 'bench',
      graphHash: 'hash',
      graphVersion: 1,
      stateVersion: 1,
      createdAt: 0,
      status: 'running',
      snapshot: '{"state":{"count":0}}',
    });
  }
  const start = performance.now();
  for (let seq = 1; seq <= operations; seq++) {
    if (kind === 'select-1') {
      await floor.query({ name: 'bench_select', text: 'SELECT 1' });
    } else if (kind === 'insert') {
      await floor.query({
        name: 'bench_insert',
        text: `INSERT INTO "${schema}".floor (run_id, seq, at, event) VALUES ($1, $2, $3, $4)`,
        values: [runId, seq, seq, event(seq)],
      });
    } else {
      await store.commit(runId, {
        seq,
        at: seq,
        event: event(seq),
        trace: null,
        status: 'running',
        error: null,
        snapshot: null,
        ...(kind === 'commit+' && {
          waits: {
            open: [
              {
                runId,
                requestId: `${runId}/approve:${seq}`,
                node: 'approve',
                activation: `approve:${seq}`,
                request: '{"prompt":"ok?"}',
                openedAt: seq,
                answer: null,
                answeredBy: null,
                answeredAt: null,
              },
            ],
          },
          timers: { set: [{ runId, id: 'deadline', at: seq + 60_000 }] },
        }),
      });
    }
  }
  const elapsed = performance.now() - start;
  if (kind === 'commit' || kind === 'commit+') {
    const run = await store.getRun(runId);
    if (run?.seq !== operations) throw new Error(`run ${runId} ended at seq ${run?.seq}`);
  }
  return (elapsed * 1_000) / operations;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

try {
  await store.getRun('none'); // creates the schema
  await floor.query(`CREATE TABLE "${schema}".floor (
    run_id text COLLATE "C" NOT NULL, seq bigint NOT NULL, at double precision NOT NULL,
    event text NOT NULL, PRIMARY KEY (run_id, seq))`);
  const { rows } = await floor.query<{ version: string; sync: string; fsync: string }>(
    `SELECT current_setting('server_version') AS version,
      current_setting('synchronous_commit') AS sync, current_setting('fsync') AS fsync`,
  );
  const settings = rows[0]!;

  const warmUntil = performance.now() + warmUpMs;
  while (performance.now() < warmUntil) for (const kind of kinds) await repetition(kind);
  const samples = Object.fromEntries(kinds.map((kind) => [kind, [] as number[]])) as Record<
    Kind,
    number[]
  >;
  for (let i = 0; i < repetitions; i++)
    for (const kind of kinds) samples[kind].push(await repetition(kind));

  const fmt = (us: number) => us.toFixed(1).padStart(7);
  process.stdout.write(
    `PostgreSQL ${settings.version} (synchronous_commit=${settings.sync}, fsync=${settings.fsync}), ` +
      `node-postgres ${(await import('pg/package.json', { with: { type: 'json' } })).default.version}, ` +
      `${operations} operations per repetition, median of ${repetitions} (us per operation)\n`,
  );
  process.stdout.write('  kind         median      min      max   / insert\n');
  const insert = median(samples.insert);
  for (const kind of kinds) {
    const s = samples[kind];
    process.stdout.write(
      `  ${kind.padEnd(10)} ${fmt(median(s))}  ${fmt(Math.min(...s))}  ${fmt(Math.max(...s))}  ${(median(s) / insert).toFixed(2).padStart(7)}\n`,
    );
  }
} finally {
  await floor.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => {});
  await store.close();
  await floor.end();
}
