import type { Pool, PoolClient } from 'pg';
import { WaymarkError } from '../../error/waymark-error.js';
import { foldFailuresMigration } from './pg-fold-failures.js';
import { itemsMigration } from './pg-items-sql.js';
import { limitsMigration } from './pg-limits-sql.js';
import { queueMigration, wakeOnlyMigration, workChannel } from './pg-queue-sql.js';
import { ratesMigration } from './pg-rates-sql.js';
import { retentionMigration } from './pg-retention-sql.js';
import { schedulesMigration } from './pg-schedules-sql.js';
import { signalsMigration } from './pg-signals-sql.js';
import { watchChannel, watchMigration } from './pg-watch-sql.js';

// The PostgreSQL schema, as an ordered list of migrations over the store's own schema (a
// PostgreSQL namespace, `waymark` by default). The schema records every migration applied to
// it in `schema_version`; a store applies the missing ones on its first call, in one
// transaction under an advisory lock, so two processes starting at once migrate it once and a
// half-migrated schema cannot exist. Never edit a migration that has shipped: append one.
//
// Text columns that are keys or sort orders use the "C" collation: byte order, the order SQLite
// and the memory store sort ids in, whatever the database's locale (and cheaper to compare).
// Times the runtime gives (`created_at`, `at`, timers) are `double precision`: the contract's
// times are JavaScript numbers and need not be whole, and float8 is exactly that type, so they
// come back as given. Lease expiries are the database's own clock in whole ms (`bigint`).

/** Each migration's SQL, given the quoted schema name. */
export const pgMigrations: readonly ((s: string) => string)[] = [
  // 1: runs (with their head: seq, status, error, and their lease), history, effects, waits,
  // timers and memos. The runs row is updated by every commit: nothing it indexes changes after
  // the start, and fillfactor leaves room on its page, so the update stays a HOT update.
  (s) => `
  CREATE TABLE ${s}.runs (
    id text COLLATE "C" PRIMARY KEY,
    graph text COLLATE "C" NOT NULL,
    graph_hash text NOT NULL,
    graph_version bigint NOT NULL,
    state_version bigint NOT NULL,
    format integer NOT NULL,
    labels text,
    created_at double precision NOT NULL,
    seq bigint NOT NULL,
    status text NOT NULL,
    error text,
    updated_at double precision NOT NULL,
    lease_owner text,
    lease_host text,
    lease_pid integer,
    lease_epoch bigint,
    lease_expires_at bigint,
    CONSTRAINT lease_whole CHECK (
      (lease_epoch IS NULL) = (lease_owner IS NULL)
      AND (lease_epoch IS NULL) = (lease_expires_at IS NULL))
  ) WITH (fillfactor = 80);
  CREATE INDEX runs_newest ON ${s}.runs (created_at DESC, id DESC);
  CREATE INDEX runs_by_graph ON ${s}.runs (graph, created_at DESC, id DESC);

  -- Written only by a commit's statement, after it moved the run's row: no foreign key to check.
  CREATE TABLE ${s}.events (
    run_id text COLLATE "C" NOT NULL,
    seq bigint NOT NULL,
    at double precision NOT NULL,
    event text NOT NULL,
    trace text,
    PRIMARY KEY (run_id, seq)
  );

  CREATE TABLE ${s}.snapshots (
    run_id text COLLATE "C" NOT NULL,
    seq bigint NOT NULL,
    data text NOT NULL,
    PRIMARY KEY (run_id, seq)
  );

  CREATE TABLE ${s}.effects (
    run_id text COLLATE "C" NOT NULL REFERENCES ${s}.runs (id),
    key text COLLATE "C" NOT NULL,
    result text NOT NULL,
    at double precision NOT NULL,
    PRIMARY KEY (run_id, key)
  );

  -- n is the order waits were recorded in: the tie-break of waits opened at the same time.
  CREATE TABLE ${s}.waits (
    n bigint GENERATED ALWAYS AS IDENTITY,
    run_id text COLLATE "C" NOT NULL REFERENCES ${s}.runs (id),
    request_id text COLLATE "C" NOT NULL,
    node text NOT NULL,
    activation text NOT NULL,
    request text NOT NULL,
    opened_at double precision NOT NULL,
    answer text,
    answered_by text,
    answered_at double precision,
    closed_at double precision,
    PRIMARY KEY (run_id, request_id)
  );

  CREATE TABLE ${s}.timers (
    run_id text COLLATE "C" NOT NULL REFERENCES ${s}.runs (id),
    id text COLLATE "C" NOT NULL,
    at double precision NOT NULL,
    PRIMARY KEY (run_id, id)
  );
  CREATE INDEX timers_due ON ${s}.timers (at, run_id, id);

  -- A memo outlives its run's purpose (a later run of an edited graph reads it back), so it has
  -- no foreign key; n is recording order, and the newest match wins.
  CREATE TABLE ${s}.memos (
    n bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    graph text COLLATE "C" NOT NULL,
    node text COLLATE "C" NOT NULL,
    node_version bigint NOT NULL,
    input_hash text COLLATE "C" NOT NULL,
    output text NOT NULL,
    run_id text NOT NULL,
    activation text NOT NULL,
    at double precision NOT NULL
  );
  CREATE INDEX memos_by_input ON ${s}.memos (graph, node, node_version, input_hash, n DESC);
  `,
  // 2: the work queue (pg-queue-sql.ts): tasks, each run's inbox, the registry of workers, and
  // the notifications that wake idle workers.
  (s) => queueMigration(s, workChannel(s)),
  // 3: the runs of a graph a worker may claim, found without reading the finished ones: a
  // claim scanned every run of its graphs ever made. Keyed by what never changes, and
  // conditioned on a status few commits change, so that a commit's update of the row stays HOT.
  (s) =>
    `CREATE INDEX runs_live ON ${s}.runs (graph, created_at, id) WHERE status IN ('running', 'waiting');`,
  // 4: watchers of a run wake on NOTIFY when it commits, and only watched runs notify.
  (s) => watchMigration(s, watchChannel(s)),
  // 5: claims take the oldest live runs first, across the worker's graphs: keyed by graph, the
  // index of migration 3 gave no such order, and the planner's generic plan walked runs_newest
  // from the oldest run instead, through every finished one. Keyed by that order, conditioned
  // on a live status as before (a commit's update stays HOT).
  (
    s,
  ) => `CREATE INDEX runs_claim ON ${s}.runs (created_at, id) WHERE status IN ('running', 'waiting');
    DROP INDEX ${s}.runs_live;`,
  // 6: claims of tasks take the due ones in the order they are served, by walking an index in
  // that order: the index of migration 2 was keyed by graph and lease expiry, so every claim
  // sorted all the queued tasks to take a few. Keyed by what a claim never changes (it sets the
  // owner, epoch and expiry), so a claim's update of the row is HOT.
  (s) => `CREATE INDEX tasks_due ON ${s}.tasks ((coalesce(not_before, 0)), created_at);
    DROP INDEX ${s}.tasks_claimable;`,
  // 7: a task's result wakes idle workers only when its writer asks (pg-queue-sql.ts).
  (s) => wakeOnlyMigration(s, workChannel(s)),
  // 8: the count of a run's failed folds, so that a run nobody can fold fails after a few.
  (s) => foldFailuresMigration(s),
  // 9: the memory items kept across runs (pg-items-sql.ts).
  (s) => itemsMigration(s),
  // 10: claims walk the running runs only, and find a waiting run through its inbox or a due
  // timer (runCandidates): with runs_claim, each claim walked every run asleep or waiting for a
  // person, 7.6 ms with 10,000 of them against 0.2 ms with none (npm run bench -- time).
  (s) => `CREATE INDEX runs_running ON ${s}.runs (created_at, id) WHERE status = 'running';
    DROP INDEX ${s}.runs_claim;`,
  // 11: concurrency limits per graph and key (pg-limits-sql.ts): a row per limited run, and the
  // trigger that frees and hands on its slot as the run's status changes.
  (s) => limitsMigration(s),
  // 12: schedules (pg-schedules-sql.ts): a tick is taken by a conditional update of its row.
  (s) => schedulesMigration(s),
  // 13: signals for event nodes, and the open event waits that asked for one (pg-signals-sql.ts).
  (s) => signalsMigration(s),
  // 14: retention: the runs a run reads recorded outputs from (reuseFrom, a rewind's source),
  // so that deleting one of those is refused while the run reading it goes on (pg-retention-sql.ts).
  (s) => retentionMigration(s),
  // 15: rate limits on shared resources: admissions in a resource's last minute, and the
  // blocks of a 429 (pg-rates-sql.ts). They belong to no run.
  (s) => ratesMigration(s),
];

/** The schema version this code writes: the number of migrations. */
export const pgSchemaVersion = pgMigrations.length;

/**
 * The first key of the store's advisory locks ('wymk'): the second is a hash of the schema
 * name, so stores of two schemas in one database never wait for each other.
 */
const lockSpace = 0x77796d6b;

/**
 * Brings the schema to {@link pgSchemaVersion}, or refuses one made by a newer waymark. A
 * schema already current costs one read and takes no lock; otherwise the migrations run in one
 * transaction under `pg_advisory_xact_lock`, which re-reads the version once it holds the lock.
 *
 * @example
 * await migratePg(pool, 'waymark', '"waymark"');
 */
export async function migratePg(
  pool: Pool,
  schema: string,
  quoted: string,
  create = true,
): Promise<void> {
  const { rows } = await pool.query<{ encoding: string; present: boolean }>(
    `SELECT current_setting('server_encoding') AS encoding, to_regclass($1) IS NOT NULL AS present`,
    [`${quoted}.schema_version`],
  );
  const encoding = rows[0]?.encoding;
  if (encoding !== 'UTF8') {
    throw new WaymarkError(
      'STORE_UNAVAILABLE',
      `PostgreSQL store (schema "${schema}"): the database's encoding is ${encoding}; waymark keeps its text as UTF-8 and needs a UTF8 database`,
      { retryable: false, details: { schema, sqlstate: null, encoding } },
    );
  }
  if (rows[0]?.present && (await version(pool, quoted)) === pgSchemaVersion) return;
  if (!rows[0]?.present && !create) {
    throw new WaymarkError(
      'STORE_UNAVAILABLE',
      `PostgreSQL store: there is no waymark schema "${schema}" in this database`,
      { retryable: false, details: { schema, sqlstate: null, reason: 'missing' } },
    );
  }

  const client = await pool.connect();
  // An error event on a checked-out client (its backend was terminated) must not crash the
  // process: the query in flight rejects with it, and the client is released as broken.
  const ignore = () => {};
  client.on('error', ignore);
  let broken: unknown;
  try {
    await client.query('BEGIN');
    try {
      await migrateLocked(client, schema, quoted);
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {});
      throw error;
    }
  } catch (error) {
    broken = error instanceof WaymarkError ? undefined : error;
    throw error;
  } finally {
    client.off('error', ignore);
    client.release(broken === undefined ? undefined : (broken as Error));
  }
}

async function version(db: Pool | PoolClient, quoted: string): Promise<number> {
  const { rows } = await db.query<{ version: number }>(
    `SELECT coalesce(max(version), 0)::integer AS version FROM ${quoted}.schema_version`,
  );
  return rows[0]?.version ?? 0;
}

async function migrateLocked(client: PoolClient, schema: string, quoted: string): Promise<void> {
  await client.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [lockSpace, schema]);
  const { rows } = await client.query<{ missing: boolean }>(
    'SELECT to_regnamespace($1) IS NULL AS missing',
    [quoted],
  );
  // Only when missing: CREATE SCHEMA needs the CREATE right on the database, which a role
  // given an existing schema may not have.
  if (rows[0]?.missing) await client.query(`CREATE SCHEMA ${quoted}`);
  await client.query(
    `CREATE TABLE IF NOT EXISTS ${quoted}.schema_version (
      version integer PRIMARY KEY,
      applied_at timestamptz NOT NULL DEFAULT now())`,
  );
  const current = await version(client, quoted);
  if (current > pgSchemaVersion) {
    throw new WaymarkError(
      'STORE_VERSION_UNSUPPORTED',
      `database schema version ${current} is newer than this waymark (${pgSchemaVersion}): PostgreSQL schema "${schema}"`,
      {
        retryable: false,
        details: { schema, schemaVersion: current, supported: pgSchemaVersion },
      },
    );
  }
  for (let next = current + 1; next <= pgSchemaVersion; next++) {
    await client.query(pgMigrations[next - 1]!(quoted));
    await client.query(`INSERT INTO ${quoted}.schema_version (version) VALUES ($1)`, [next]);
  }
}
