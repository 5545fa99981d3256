import pg from 'pg';
import { expect, it } from 'vitest';
import { z } from 'zod';
import { enqueue, graph, isWaymarkError, Worker, type WorkerEvent } from '../../src/index.js';
import { PostgresStore } from '../../src/postgres.js';
import { describePg, pgStoreForFile, pgUrl } from './fixtures/postgres.js';

// Every statement of the store's own pool has deadlines (statement_timeout, query_timeout,
// keep-alive, idle_in_transaction_session_timeout), so a statement that never answers fails
// with STORE_UNAVAILABLE instead of holding its caller, and a worker's work is taken over by
// another worker rather than held by one whose writes hang.

const db = pgStoreForFile();

/** A connection string on the test server whose sessions are named `name` in pg_stat_activity. */
const named = (name: string) =>
  `${pgUrl}${pgUrl.includes('?') ? '&' : '?'}application_name=${name}`;

/** Whether `promise` rejected with a retryable STORE_UNAVAILABLE. */
async function unavailable(promise: Promise<unknown>): Promise<boolean> {
  try {
    await promise;
    return false;
  } catch (error) {
    return isWaymarkError(error) && error.code === 'STORE_UNAVAILABLE' && error.retryable;
  }
}

const until = async (what: string, check: () => Promise<boolean> | boolean, ms = 30_000) => {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`still not ${what} after ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
};

describePg('PostgreSQL deadlines', () => {
  it('are options of the store’s own pool, checked; a given pool keeps its own', () => {
    const refused = (make: () => unknown) => {
      try {
        make();
        return undefined;
      } catch (error) {
        return isWaymarkError(error) ? error.code : error;
      }
    };
    expect(refused(() => new PostgresStore({ statementTimeoutMs: 0 }))).toBe('OPTIONS_INVALID');
    expect(refused(() => new PostgresStore({ queryTimeoutMs: 1.5 }))).toBe('OPTIONS_INVALID');
    expect(
      refused(() => new PostgresStore({ statementTimeoutMs: 2_000, queryTimeoutMs: 1_000 })),
    ).toBe('OPTIONS_INVALID');
    expect(refused(() => new PostgresStore({ pool: db.pool, statementTimeoutMs: 500 }))).toBe(
      'OPTIONS_INVALID',
    );
    expect(new PostgresStore({}).statementDeadlineMs).toBe(3_000);
    expect(
      new PostgresStore({ statementTimeoutMs: 400, queryTimeoutMs: 600 }).statementDeadlineMs,
    ).toBe(600);
    // A pool of the user's, without deadlines: theirs to bound, nothing is assumed.
    expect(db.store.statementDeadlineMs).toBeUndefined();
  });

  it('a worker refuses a lease too short for the store’s statement deadline (a third of it)', () => {
    const chain = graph('deadline-lease', { state: z.object({}) })
      .node('a', () => ({}), {
        terminal: true,
      })
      .entry('a')
      .compile();
    const own = new PostgresStore({ connectionString: pgUrl, schema: db.schema });
    try {
      new Worker(own, [chain], { leaseMs: 9_000 });
      expect.unreachable('a 9 s lease is not above 3 x the 3 s default deadline');
    } catch (error) {
      expect(isWaymarkError(error) && error.code).toBe('OPTIONS_INVALID');
      expect(String(error)).toMatch(/third of the lease/);
    }
    expect(() => new Worker(own, [chain], { leaseMs: 10_000 })).not.toThrow();
    // The default lease fits the default deadlines.
    expect(() => new Worker(own, [chain])).not.toThrow();
    expect(() => new Worker(db.store, [chain], { leaseMs: 1_500 })).not.toThrow();
    return own.close();
  });

  it('a statement that hangs on a lock is cut by its deadline (STORE_UNAVAILABLE, retryable)', async () => {
    const store = new PostgresStore({
      connectionString: named('waymark-deadline'),
      schema: db.schema,
      statementTimeoutMs: 300,
      queryTimeoutMs: 500,
    });
    await store.listRuns(); // migrated before the lock is taken
    const locker = new pg.Client({ connectionString: pgUrl });
    await locker.connect();
    try {
      await locker.query('BEGIN');
      await locker.query(`LOCK TABLE "${db.schema}".runs IN ACCESS EXCLUSIVE MODE`);
      // Without a deadline this waits for the lock, which is held until the assertion is done.
      expect(await unavailable(store.listRuns())).toBe(true);
      await locker.query('ROLLBACK');
      // The pool is usable again once the lock is gone.
      expect(await store.listRuns()).toEqual([]);
    } finally {
      await locker.end();
      await store.close();
    }
  }, 20_000);

  it('a worker whose writes hang loses its task, and another worker finishes the run', async () => {
    // Every insert or update of the worker named "waymark-hung" sleeps 30 s once `hang` has a
    // row: its result write and its lease renewals never answer, as on a dead network path.
    const q = `"${db.schema}"`;
    await db.pool.query(`
      CREATE TABLE ${q}.hang (on_ boolean);
      CREATE FUNCTION ${q}.hang() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF current_setting('application_name') = 'waymark-hung'
           AND EXISTS (SELECT 1 FROM ${q}.hang) THEN PERFORM pg_sleep(30); END IF;
        RETURN NULL;
      END $$;
      CREATE TRIGGER hang_tasks BEFORE INSERT OR UPDATE ON ${q}.tasks
        FOR EACH STATEMENT EXECUTE FUNCTION ${q}.hang();
      CREATE TRIGGER hang_inbox BEFORE INSERT OR UPDATE ON ${q}.inbox
        FOR EACH STATEMENT EXECUTE FUNCTION ${q}.hang();
      CREATE TRIGGER hang_runs BEFORE INSERT OR UPDATE ON ${q}.runs
        FOR EACH STATEMENT EXECUTE FUNCTION ${q}.hang();`);
    let release!: () => void;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    let bodies = 0;
    const g = graph('deadline-takeover', { state: z.object({ by: z.number().default(0) }) })
      .node(
        'slow',
        async () => {
          bodies++;
          // The first body (the hung worker's) ends only once its writes hang.
          if (bodies === 1) await released;
          return { by: bodies };
        },
        { terminal: true },
      )
      .entry('slow')
      .compile();
    const hungStore = new PostgresStore({
      connectionString: named('waymark-hung'),
      schema: db.schema,
      statementTimeoutMs: 400,
      queryTimeoutMs: 600,
    });
    const events: WorkerEvent[] = [];
    const stopHung = new AbortController();
    const stopOther = new AbortController();
    const hung = new Worker(hungStore, [g], {
      leaseMs: 3_000,
      pollMs: 100,
      inline: false,
      onEvent: (e) => events.push(e),
    }).run(stopHung.signal);
    let other: Promise<void> | undefined;
    try {
      const runId = await enqueue(db.store, g, {});
      await until('the first body started', () => bodies === 1);
      await db.pool.query(`INSERT INTO ${q}.hang VALUES (true)`);
      release();
      other = new Worker(db.store, [g], { leaseMs: 3_000, pollMs: 100, inline: false }).run(
        stopOther.signal,
      );
      await until('the run taken over and finished', async () => {
        const run = await db.store.getRun(runId);
        return run?.status === 'succeeded';
      });
      expect(bodies).toBe(2);
      expect(events.some((e) => e.type === 'lost')).toBe(true);
      // Nothing of the hung worker's stays waiting in the server: each statement is cut at its
      // deadline (400 ms). The worker still claims, and each claim hangs until cut, so one of
      // its statements may be active at any moment: none is older than the deadline allows.
      await until(
        'no statement of the hung worker left running past its deadline',
        async () => {
          const { rows } = await db.pool.query(
            `SELECT count(*)::int AS n FROM pg_stat_activity
           WHERE application_name = 'waymark-hung' AND state = 'active'
             AND now() - query_start > interval '2 seconds'`,
          );
          return rows[0].n === 0;
        },
        5_000,
      );
    } finally {
      stopHung.abort();
      stopOther.abort();
      await Promise.all([hung, other]);
      await hungStore.close();
      await db.pool.query(`
        DROP TRIGGER hang_tasks ON ${q}.tasks; DROP TRIGGER hang_inbox ON ${q}.inbox;
        DROP TRIGGER hang_runs ON ${q}.runs; DROP FUNCTION ${q}.hang(); DROP TABLE ${q}.hang;`);
    }
  }, 60_000);
});
