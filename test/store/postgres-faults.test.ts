import pg from 'pg';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { PostgresStore } from '../../src/postgres.js';
import { pgMigrations, pgSchemaVersion } from '../../src/store/internal/pg-schema.js';
import { sampleRun as newRun, sampleCommit as step } from '../../src/testing/index.js';
import {
  describePg,
  dropSchema,
  pgUrl,
  schemaName,
  skipReason,
  testPool,
} from './fixtures/postgres.js';

// What PostgreSQL itself does to a store: connections killed under it, a server that is not
// there, a pool with no free connection, and schemas created and migrated by several stores.
const schema = schemaName();
const admin = skipReason === undefined ? testPool({ max: 3 }) : undefined;
const schemas = [schema];

afterAll(async () => {
  if (admin === undefined) return;
  for (const name of schemas) await dropSchema(admin, name);
  await admin.end();
});

/** Resolves with the error a promise rejects with, or fails the test if it fulfils. */
async function refusal(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error('expected a rejection');
    },
    (error: unknown) => error,
  );
}

/** The connection string with an application_name, to find the store's backends by. */
function named(application: string): string {
  return `${pgUrl}${pgUrl.includes('?') ? '&' : '?'}application_name=${application}`;
}

/** Polls until `check` is true (a backend reached the state the test waits for). */
async function until(check: () => Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** Holds run `runId`'s row locked in a transaction of its own until `release()` is called. */
async function lockRun(runId: string): Promise<{ release(): Promise<void> }> {
  const client = await admin!.connect();
  await client.query('BEGIN');
  await client.query(`SELECT 1 FROM "${schema}".runs WHERE id = $1 FOR UPDATE`, [runId]);
  return {
    release: async () => {
      await client.query('ROLLBACK');
      client.release();
    },
  };
}

/** Waits until a backend of `application` waits for a lock; returns its pid. */
async function blockedBackend(application: string): Promise<number> {
  let pid = 0;
  await until(async () => {
    const { rows } = await admin!.query<{ pid: number }>(
      `SELECT pid FROM pg_stat_activity WHERE application_name = $1 AND wait_event_type = 'Lock'`,
      [application],
    );
    pid = rows[0]?.pid ?? 0;
    return pid !== 0;
  }, `a backend of ${application} waiting for a lock`);
  return pid;
}

describePg('PostgresStore under faults', () => {
  const opened: PostgresStore[] = [];
  afterEach(async () => {
    for (const store of opened.splice(0)) await store.close();
  });

  it('a connection killed with pg_terminate_backend mid-commit is STORE_UNAVAILABLE (retryable, 57P01); the next call works', async () => {
    const application = `wm_${schema}_kill`;
    const store = new PostgresStore({ connectionString: named(application), schema, poolSize: 1 });
    opened.push(store);
    await store.createRun(newRun('killed'));
    const lock = await lockRun('killed');
    const commit = refusal(store.commit('killed', step(1)));
    const pid = await blockedBackend(application);
    await admin!.query('SELECT pg_terminate_backend($1)', [pid]);
    expect(await commit).toMatchObject({
      code: 'STORE_UNAVAILABLE',
      retryable: true,
      details: { schema, sqlstate: '57P01' },
    });
    await lock.release();
    expect((await store.getRun('killed'))?.seq).toBe(0);
    await store.commit('killed', step(1));
    expect((await store.getRun('killed'))?.seq).toBe(1);
  });

  it('an idle connection killed between calls is replaced: the next call works', async () => {
    const application = `wm_${schema}_idle`;
    const pool = testPool({ connectionString: named(application), max: 1 });
    const store = new PostgresStore({ pool, schema });
    try {
      await store.createRun(newRun('idle'));
      await admin!.query(
        'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1',
        [application],
      );
      // The pool drops the connection once it hears it is gone.
      await until(async () => pool.totalCount === 0, 'the pool to drop its dead connection');
      await store.commit('idle', step(1));
      expect((await store.getRun('idle'))?.seq).toBe(1);
    } finally {
      await store.close();
      await pool.end();
    }
  });

  it('a server that refuses connections is STORE_UNAVAILABLE, retryable, with SQLSTATE 08001', async () => {
    const store = new PostgresStore({
      connectionString: 'postgres://postgres@127.0.0.1:1/test',
      schema,
      connectTimeoutMs: 2_000,
    });
    opened.push(store);
    expect(await refusal(store.getRun('r1'))).toMatchObject({
      code: 'STORE_UNAVAILABLE',
      retryable: true,
      details: { schema, sqlstate: '08001' },
    });
    expect(await refusal(PostgresStore.open('postgres://postgres@127.0.0.1:1/test'))).toMatchObject(
      {
        code: 'STORE_UNAVAILABLE',
        retryable: true,
      },
    );
  });

  it('a call that finds no free connection within connectTimeoutMs is STORE_UNAVAILABLE, retryable', async () => {
    const application = `wm_${schema}_full`;
    const store = new PostgresStore({
      connectionString: named(application),
      schema,
      poolSize: 1,
      connectTimeoutMs: 200,
    });
    opened.push(store);
    await store.createRun(newRun('full'));
    const lock = await lockRun('full');
    const commit = store.commit('full', step(1));
    await blockedBackend(application);
    expect(await refusal(store.getRun('full'))).toMatchObject({
      code: 'STORE_UNAVAILABLE',
      retryable: true,
      details: { sqlstate: '08001' },
    });
    await lock.release();
    await commit;
    expect((await store.getRun('full'))?.seq).toBe(1);
  });
});

describePg('PostgresStore schema', () => {
  /** A fresh schema name, dropped after the file. */
  function fresh(): string {
    const name = schemaName();
    schemas.push(name);
    return name;
  }

  async function versions(name: string): Promise<number[]> {
    const { rows } = await admin!.query<{ version: number }>(
      `SELECT version FROM "${name}".schema_version ORDER BY version`,
    );
    return rows.map((row) => row.version);
  }

  it('four stores starting together on a new schema create it once, and all of them work', async () => {
    const name = fresh();
    const stores = Array.from(
      { length: 4 },
      () => new PostgresStore({ connectionString: pgUrl, schema: name, poolSize: 1 }),
    );
    try {
      await Promise.all(stores.map((store, i) => store.createRun(newRun(`r${i}`))));
      expect(await versions(name)).toEqual(
        Array.from({ length: pgSchemaVersion }, (_, i) => i + 1),
      );
      expect((await stores[0]!.listRuns()).map((r) => r.id).sort()).toEqual([
        'r0',
        'r1',
        'r2',
        'r3',
      ]);
    } finally {
      for (const store of stores) await store.close();
    }
  });

  it('open() creates the schema now; a store on a schema already current migrates nothing', async () => {
    const name = fresh();
    const first = await PostgresStore.open({ connectionString: pgUrl, schema: name });
    await first.close();
    const { rows: before } = await admin!.query(`SELECT * FROM "${name}".schema_version`);
    const again = await PostgresStore.open({ pool: admin!, schema: name });
    await again.close();
    expect((await admin!.query(`SELECT * FROM "${name}".schema_version`)).rows).toEqual(before);
  });

  it('brings a schema at version 8 forward with a table of memory items, keeping its runs', async () => {
    const name = fresh();
    const quoted = `"${name}"`;
    await admin!.query(`CREATE SCHEMA ${quoted}`);
    await admin!.query(
      `CREATE TABLE ${quoted}.schema_version (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`,
    );
    for (const [i, migration] of pgMigrations.slice(0, 8).entries()) {
      await admin!.query(migration(quoted));
      await admin!.query(`INSERT INTO ${quoted}.schema_version (version) VALUES ($1)`, [i + 1]);
    }
    await admin!.query(
      `INSERT INTO ${quoted}.runs (id, graph, graph_hash, graph_version, state_version, format, created_at, seq, status, updated_at)
       VALUES ('old', 'claims', 'h', 1, 1, 3, 5, 0, 'running', 5)`,
    );
    const store = new PostgresStore({ pool: admin!, schema: name });
    await store.putItem({ namespace: ['users', 'u1'], key: 'prefs', value: '{"theme":"dark"}' });
    expect(await versions(name)).toEqual(Array.from({ length: pgSchemaVersion }, (_, i) => i + 1));
    expect(await store.getRun('old')).toMatchObject({ id: 'old', status: 'running' });
    expect(await store.getItem(['users', 'u1'], 'prefs')).toMatchObject({
      value: '{"theme":"dark"}',
    });
  });

  it('uses a schema that exists already and is empty (made by a DBA), creating its tables there', async () => {
    const name = fresh();
    await admin!.query(`CREATE SCHEMA "${name}"`);
    const store = new PostgresStore({ pool: admin!, schema: name });
    await store.createRun(newRun('r1'));
    expect(await versions(name)).toEqual(Array.from({ length: pgSchemaVersion }, (_, i) => i + 1));
  });

  it('refuses a schema whose version is newer than this waymark, and leaves it untouched', async () => {
    const name = fresh();
    const store = await PostgresStore.open({ pool: admin!, schema: name });
    await store.createRun(newRun('r1'));
    await admin!.query(`INSERT INTO "${name}".schema_version (version) VALUES ($1)`, [
      pgSchemaVersion + 1,
    ]);
    const newer = new PostgresStore({ pool: admin!, schema: name });
    const error = await refusal(newer.getRun('r1'));
    expect(error).toMatchObject({
      code: 'STORE_VERSION_UNSUPPORTED',
      retryable: false,
      message: expect.stringContaining(
        `database schema version ${pgSchemaVersion + 1} is newer than this waymark (${pgSchemaVersion})`,
      ),
      details: { schema: name, schemaVersion: pgSchemaVersion + 1, supported: pgSchemaVersion },
    });
    await expect(PostgresStore.open({ pool: admin!, schema: name })).rejects.toMatchObject({
      code: 'STORE_VERSION_UNSUPPORTED',
    });
    expect(await versions(name)).toEqual(
      Array.from({ length: pgSchemaVersion + 1 }, (_, i) => i + 1),
    );
    expect((await admin!.query(`SELECT id FROM "${name}".runs`)).rows).toEqual([{ id: 'r1' }]);
  });
});

describe('PostgresStore without a server', () => {
  it('never throws a raw driver error: an unknown host is STORE_UNAVAILABLE', async () => {
    const store = new PostgresStore({
      connectionString: 'postgres://nobody@no-such-host.invalid/none',
      connectTimeoutMs: 2_000,
    });
    try {
      const error = await refusal(store.listRuns());
      expect(error).toMatchObject({ code: 'STORE_UNAVAILABLE', retryable: true });
      expect(error).not.toBeInstanceOf(pg.DatabaseError);
    } finally {
      await store.close();
    }
  });
});
