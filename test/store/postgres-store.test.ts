import { afterAll, afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { PostgresStore } from '../../src/postgres.js';
import {
  commitSteps,
  sampleRun as newRun,
  sampleCommit as step,
  storeConformance,
} from '../../src/testing/index.js';
import {
  describePg,
  dropSchema,
  pgSuite,
  pgUrl,
  schemaName,
  skipReason,
  testPool,
  truncate,
} from './fixtures/postgres.js';

// The whole conformance suite on PostgreSQL: one schema for the file, emptied between tests,
// and a fresh store (on one shared pool) for each.
const schema = schemaName();
const pool = skipReason === undefined ? testPool({ max: 4 }) : undefined;

afterAll(async () => {
  if (pool === undefined) return;
  await dropSchema(pool, schema);
  await pool.end();
});

storeConformance(
  'PostgresStore',
  async () => {
    const store = new PostgresStore({ pool: pool!, schema });
    return {
      store,
      cleanup: async () => {
        await store.close();
        await truncate(pool!, schema);
      },
    };
  },
  { describe: pgSuite, it, beforeEach, afterEach, expect },
);

/** Resolves with the error a promise rejects with, or fails the test if it fulfils. */
async function refusal(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error('expected a rejection');
    },
    (error: unknown) => error,
  );
}

describePg('PostgresStore on one database', () => {
  const opened: PostgresStore[] = [];

  /** A store on this file's schema with a pool of its own: another process, as far as PostgreSQL can tell. */
  function open(): PostgresStore {
    const store = new PostgresStore({ connectionString: pgUrl, schema, poolSize: 2 });
    opened.push(store);
    return store;
  }

  /** SQL on this file's schema, as a hand or another program would write it. */
  async function sql(text: string): Promise<void> {
    await pool!.query(text.replaceAll('S.', `"${schema}".`));
  }

  afterEach(async () => {
    for (const store of opened.splice(0)) await store.close();
    await truncate(pool!, schema);
  });

  describe('stores on separate pools, racing', () => {
    it('of commits for the same seq from two stores, exactly one is stored every time', async () => {
      const [a, b] = [open(), open()];
      await a.createRun(newRun('r1'));
      for (let seq = 1; seq <= 40; seq++) {
        const results = await Promise.allSettled([
          a.commit('r1', step(seq, { event: `"a${seq}"` })),
          b.commit('r1', step(seq, { event: `"b${seq}"`, snapshot: seq % 5 === 0 ? '{}' : null })),
        ]);
        const lost = results.flatMap((r) => (r.status === 'rejected' ? [r.reason] : []));
        expect(lost).toMatchObject([{ code: 'STORE_CONFLICT', details: { attempted: seq } }]);
      }
      const events = await b.events('r1');
      expect(events.map((e) => e.seq)).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
      expect((await a.getRun('r1'))?.seq).toBe(40);
    });

    it('of two owners acquiring a run at once, one gets epoch 1 and the other RUN_OWNED', async () => {
      const [a, b] = [open(), open()];
      for (let i = 0; i < 20; i++) {
        await a.createRun(newRun(`r${i}`));
        const results = await Promise.allSettled([
          a.acquire(`r${i}`, { owner: 'a', leaseMs: 60_000 }),
          b.acquire(`r${i}`, { owner: 'b', leaseMs: 60_000 }),
        ]);
        const won = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
        const lost = results.flatMap((r) => (r.status === 'rejected' ? [r.reason] : []));
        expect(won).toMatchObject([{ epoch: 1 }]);
        expect(lost).toMatchObject([{ code: 'RUN_OWNED', details: { owner: won[0]!.owner } }]);
      }
    });

    it('of two take-overs of a dead owner at the epoch they saw, one wins and the other is RUN_OWNED', async () => {
      const [a, b] = [open(), open()];
      await a.createRun(newRun('r1'));
      const dead = await a.acquire('r1', { owner: 'dead', leaseMs: 60_000 });
      const results = await Promise.allSettled([
        a.acquire('r1', { owner: 'a', leaseMs: 60_000, takeOver: dead.epoch }),
        b.acquire('r1', { owner: 'b', leaseMs: 60_000, takeOver: dead.epoch }),
      ]);
      expect(results.filter((r) => r.status === 'fulfilled')).toMatchObject([
        { value: { epoch: 2 } },
      ]);
      expect(results.filter((r) => r.status === 'rejected')).toMatchObject([
        { reason: { code: 'RUN_OWNED' } },
      ]);
      await expect(a.commit('r1', step(1, { epoch: dead.epoch }))).rejects.toMatchObject({
        code: 'LEASE_LOST',
        details: { epoch: 1, current: 2 },
      });
    });
  });

  describe('leases by the database clock', () => {
    it("a lease's expiry and liveness come from the database's clock, not the process's", async () => {
      const store = open();
      await store.createRun(newRun('r1'));
      const spy = vi.spyOn(Date, 'now').mockReturnValue(0);
      try {
        const lease = await store.acquire('r1', { owner: 'me', leaseMs: 60_000 });
        const { rows } = await pool!.query<{ now: string }>(
          'SELECT floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint AS now',
        );
        const dbNow = Number(rows[0]!.now);
        expect(lease.expiresAt).toBeGreaterThan(dbNow + 50_000);
        expect(lease.expiresAt).toBeLessThanOrEqual(dbNow + 60_000);
        expect((await store.getRun('r1'))?.lease?.live).toBe(true);
        // Expired by the database's clock, whatever this process's clock says.
        await sql("UPDATE S.runs SET lease_expires_at = lease_expires_at - 60000 WHERE id = 'r1'");
        expect((await store.getRun('r1'))?.lease?.live).toBe(false);
        expect((await store.listRuns())[0]?.lease?.live).toBe(false);
      } finally {
        spy.mockRestore();
      }
    });
  });

  describe('what comes back is what went in', () => {
    it('times come back as the numbers the runtime gave, fractions included; counts and seqs as numbers', async () => {
      const store = open();
      await store.createRun(newRun('r1', { createdAt: 1_764_580_000_123.25 }));
      await store.commit(
        'r1',
        step(1, {
          at: 1_764_580_000_124.5,
          timers: { set: [{ runId: 'r1', id: 't', at: 2 ** 52 + 0.5 }] },
        }),
      );
      expect(await store.getRun('r1')).toMatchObject({
        seq: 1,
        createdAt: 1_764_580_000_123.25,
        updatedAt: 1_764_580_000_124.5,
      });
      expect(await store.events('r1')).toMatchObject([{ seq: 1, at: 1_764_580_000_124.5 }]);
      expect(await store.listTimers('r1')).toEqual([{ runId: 'r1', id: 't', at: 2 ** 52 + 0.5 }]);
      expect(typeof (await store.usage('r1')).eventBytes).toBe('number');
    });

    it('a commit that opens and closes the same wait opens it closed; one that sets and clears a timer sets it', async () => {
      const store = open();
      await store.createRun(newRun('r1'));
      const wait = {
        runId: 'r1',
        requestId: 'q1',
        node: 'approve',
        activation: 'approve:1',
        request: '{}',
        openedAt: 5,
        answer: null,
        answeredBy: null,
        answeredAt: null,
      };
      await store.commit(
        'r1',
        step(1, {
          waits: { open: [wait, { ...wait, openedAt: 9 }], close: ['q1'] },
          timers: {
            set: [
              { runId: 'r1', id: 't', at: 7 },
              { runId: 'r1', id: 't', at: 8 },
            ],
            clear: ['t'],
          },
        }),
      );
      expect(await store.listWaits('r1')).toMatchObject([{ openedAt: 5, closedAt: 1_001 }]);
      expect(await store.listTimers('r1')).toEqual([{ runId: 'r1', id: 't', at: 8 }]);
    });

    it('lists run ids created at the same time in byte order, whatever the database locale', async () => {
      const store = open();
      for (const id of ['b', 'B', 'a', '_', 'A']) await store.createRun(newRun(id));
      expect((await store.listRuns()).map((r) => r.id)).toEqual(['b', 'a', '_', 'B', 'A']);
    });
  });

  describe('corrupt rows', () => {
    let store: PostgresStore;

    beforeEach(async () => {
      store = open();
      for (const id of ['bad', 'good']) {
        await store.createRun(newRun(id));
        await commitSteps(store, id, 1, 4, [2]);
      }
    });

    async function expectOnlyBadCorrupt(pattern: RegExp): Promise<void> {
      await expect(store.loadRun('bad')).rejects.toMatchObject({
        code: 'STORE_CORRUPT',
        message: expect.stringMatching(pattern),
        details: expect.objectContaining({ runId: 'bad' }),
      });
      const good = await store.loadRun('good');
      expect(good?.snapshot.seq).toBe(2);
      expect(good?.events.map((e) => e.seq)).toEqual([3, 4]);
    }

    it('an unknown status fails that run with STORE_CORRUPT in load, get and commit; listings leave it out', async () => {
      await sql("UPDATE S.runs SET status = 'sleeping' WHERE id = 'bad'");
      await expectOnlyBadCorrupt(/run "bad".*runs row holds string "sleeping" in column status/);
      await expect(store.getRun('bad')).rejects.toMatchObject({ code: 'STORE_CORRUPT' });
      await expect(store.commit('bad', step(5))).rejects.toMatchObject({ code: 'STORE_CORRUPT' });
      expect((await store.listRuns()).map((r) => r.id)).toEqual(['good']);
    });

    it('a seq too large for a JavaScript number is STORE_CORRUPT, not a rounded number', async () => {
      await sql(`UPDATE S.runs SET seq = ${2n ** 60n} WHERE id = 'bad'`);
      await expectOnlyBadCorrupt(/runs row holds string "1152921504606846976" in column seq/);
    });

    it('a missing event (a gap in the seqs) fails that run with STORE_CORRUPT', async () => {
      await sql("DELETE FROM S.events WHERE run_id = 'bad' AND seq = 3");
      await expectOnlyBadCorrupt(/run "bad".*events jump from seq 2 to seq 4/);
      await expect(store.events('bad')).rejects.toMatchObject({ code: 'STORE_CORRUPT' });
      expect(await store.events('good')).toHaveLength(4);
    });

    it('events missing at the end of a run fail that run with STORE_CORRUPT', async () => {
      await sql("DELETE FROM S.events WHERE run_id = 'bad' AND seq = 4");
      await expectOnlyBadCorrupt(/run "bad".*events end at seq 3, before the run's seq 4/);
    });

    it('a run with no snapshot at all fails with STORE_CORRUPT', async () => {
      await sql("DELETE FROM S.snapshots WHERE run_id = 'bad'");
      await expectOnlyBadCorrupt(/run "bad".*no snapshot/);
    });

    it('a run written in a newer store format is listed but refuses to load with STORE_VERSION_UNSUPPORTED', async () => {
      await sql("UPDATE S.runs SET format = 99 WHERE id = 'bad'");
      await expect(store.loadRun('bad')).rejects.toMatchObject({
        code: 'STORE_VERSION_UNSUPPORTED',
      });
      expect((await store.getRun('bad'))?.format).toBe(99);
      expect((await store.listRuns()).map((r) => r.id).sort()).toEqual(['bad', 'good']);
    });

    it('a stray row past the run seq makes the next commit fail with STORE_CORRUPT, writing nothing', async () => {
      await sql("INSERT INTO S.events (run_id, seq, at, event) VALUES ('bad', 5, 0, '{}')");
      await sql("INSERT INTO S.snapshots (run_id, seq, data) VALUES ('good', 5, '{}')");
      await expect(store.commit('bad', step(5))).rejects.toMatchObject({
        code: 'STORE_CORRUPT',
        message: expect.stringMatching(/run "bad".*already has rows at seq 5, past its seq 4/),
        details: { table: 'events', key: 5 },
      });
      await expect(store.commit('good', step(5, { snapshot: '{}' }))).rejects.toMatchObject({
        code: 'STORE_CORRUPT',
        details: { table: 'snapshots' },
      });
      expect((await store.getRun('bad'))?.seq).toBe(4);
      expect((await store.getRun('good'))?.seq).toBe(4);
      await store.commit('good', step(5));
    });
  });

  describe('the pool', () => {
    it('close() ends a pool the store created, and then every call is STORE_UNAVAILABLE, not retryable', async () => {
      const store = open();
      await store.createRun(newRun('r1'));
      await store.close();
      await store.close(); // twice is fine
      expect(await refusal(store.getRun('r1'))).toMatchObject({
        code: 'STORE_UNAVAILABLE',
        retryable: false,
      });
    });

    it('close() leaves a pool it was given open for its owner', async () => {
      const store = new PostgresStore({ pool: pool!, schema });
      await store.createRun(newRun('r1'));
      await store.close();
      expect((await pool!.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
    });

    it('two stores on one pool, on two schemas, keep their runs apart', async () => {
      const other = schemaName();
      const a = new PostgresStore({ pool: pool!, schema });
      const b = new PostgresStore({ pool: pool!, schema: other });
      try {
        await a.createRun(newRun('r1', { graph: 'in-a' }));
        await b.createRun(newRun('r1', { graph: 'in-b' }));
        await a.commit('r1', step(1));
        expect((await a.getRun('r1'))?.graph).toBe('in-a');
        expect(await b.getRun('r1')).toMatchObject({ graph: 'in-b', seq: 0 });
      } finally {
        await dropSchema(pool!, other);
      }
    });

    it('with create: false, uses an existing schema and never makes a missing one', async () => {
      const missing = schemaName();
      const store = new PostgresStore({ pool: pool!, schema: missing, create: false });
      await expect(store.getRun('r1')).rejects.toMatchObject({
        code: 'STORE_UNAVAILABLE',
        retryable: false,
        details: { schema: missing, reason: 'missing' },
      });
      const { rows } = await pool!.query('SELECT to_regnamespace($1) IS NULL AS absent', [missing]);
      expect(rows).toEqual([{ absent: true }]);
      const existing = new PostgresStore({ pool: pool!, schema, create: false });
      await existing.createRun(newRun('r1'));
      expect((await existing.getRun('r1'))?.id).toBe('r1');
    });

    it('leaves the parsers of a shared pool alone: its own queries still read int8 as text', async () => {
      const store = new PostgresStore({ pool: pool!, schema });
      await store.createRun(newRun('r1'));
      expect((await pool!.query('SELECT 7::bigint AS n')).rows).toEqual([{ n: '7' }]);
    });
  });
});

describe('PostgresStore options', () => {
  it.each([
    ['a number', 42],
    ['null', null],
    ['an array', ['postgres://x']],
    ['a schema that is not a plain name', { schema: 'Runs; DROP' }],
    ['a schema starting with pg_', { schema: 'pg_runs' }],
    ['a schema too long for PostgreSQL', { schema: 'a'.repeat(64) }],
    ['a pool and a connection string', { pool: {}, connectionString: 'postgres://x' }],
    ['a pool and a pool size', { pool: {}, poolSize: 3 }],
    ['a pool size of 0', { poolSize: 0 }],
    ['a connect timeout that is not whole', { connectTimeoutMs: 1.5 }],
  ])('refuses %s with OPTIONS_INVALID', (_, argument) => {
    expect(() => new PostgresStore(argument as never)).toThrow(
      expect.objectContaining({ code: 'OPTIONS_INVALID' }),
    );
  });

  it('takes a connection string alone, and keeps its tables in the schema "waymark" by default', async () => {
    const store = new PostgresStore('postgres://nobody@127.0.0.1:1/none');
    expect(store.schema).toBe('waymark');
    await store.close();
  });
});
