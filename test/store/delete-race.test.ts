import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { PostgresStore } from '../../src/postgres.js';
import { SqliteStore } from '../../src/sqlite.js';
import type { Store } from '../../src/store/store.js';
import type { WorkQueue } from '../../src/store/work-queue.js';
import { sampleRun as newRun, sampleCommit as step } from '../../src/testing/index.js';
import {
  describePg,
  dropSchema,
  pgUrl,
  schemaName,
  skipReason,
  testPool,
} from './fixtures/postgres.js';

// Deletes racing a worker's claim and its commit of the same runs, from two connections: each
// run ends whole (it loads, with every step that was committed) or gone (no row left of it).

const runs = 40;
const graphs = [{ name: 'claims', hash: 'hash-1' }];

/** Waiting runs with a wake-up each: what a worker claims to fold. */
async function waitingRuns(store: Store & WorkQueue, prefix: string): Promise<string[]> {
  const ids = Array.from({ length: runs }, (_, i) => `${prefix}${i}`);
  for (const id of ids) {
    await store.createRun(newRun(id));
    await store.commit(id, step(1, { status: 'waiting' }));
    await store.wake(id, 2_000);
  }
  return ids;
}

/** A worker: claims the runs and commits a step that finishes each, as fast as it can. */
async function worker(store: Store & WorkQueue): Promise<number> {
  let committed = 0;
  for (let round = 0; round < 20; round++) {
    const claimed = await store.claimAndLoadRuns({
      owner: 'worker',
      leaseMs: 60_000,
      graphs,
      limit: 5,
    });
    if (claimed.length === 0) break;
    for (const claim of claimed) {
      if (!('run' in claim)) continue;
      const { lease, run } = claim;
      await store
        .commit(
          lease.runId,
          step(run.run.seq + 1, {
            status: 'succeeded',
            snapshot: '{}',
            epoch: lease.epoch,
            release: true,
          }),
        )
        .then(
          () => committed++,
          () => {},
        );
    }
  }
  return committed;
}

/** Deletes every run it can, forced: live ones are refused and tried again once. */
async function deleter(store: Store, ids: readonly string[]): Promise<void> {
  for (let pass = 0; pass < 2; pass++) {
    for (const id of ids) await store.deleteRun(id, { force: true }).catch(() => {});
  }
}

async function checkWholeOrGone(store: Store, ids: readonly string[]): Promise<void> {
  for (const id of ids) {
    const loaded = await store.loadRun(id);
    if (loaded === undefined) {
      expect(await store.getRun(id)).toBeUndefined();
      continue;
    }
    expect(loaded.run.seq === 1 || loaded.run.seq === 2).toBe(true);
    expect(loaded.run.status).toBe(loaded.run.seq === 1 ? 'waiting' : 'succeeded');
    expect((await store.events(id)).map((e) => e.seq)).toEqual(loaded.run.seq === 1 ? [1] : [1, 2]);
  }
}

describe('deletes racing claims on SQLite', () => {
  const dir = mkdtempSync(join(tmpdir(), 'waymark-delete-race-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('every run is whole or gone, and no row of a deleted run is left', async () => {
    const path = join(dir, 'w.db');
    const a = new SqliteStore(path);
    const b = new SqliteStore(path);
    const ids = await waitingRuns(a, 's');
    await Promise.all([worker(b), deleter(a, ids)]);
    await checkWholeOrGone(a, ids);
    const db = new Database(path, { readonly: true });
    const n = (sql: string) => (db.prepare(sql).get() as { n: number }).n;
    expect(
      n('SELECT count(*) AS n FROM events WHERE (key >> 32) NOT IN (SELECT num FROM runs)'),
    ).toBe(0);
    expect(n('SELECT count(*) AS n FROM inbox WHERE run_id NOT IN (SELECT id FROM runs)')).toBe(0);
    expect(n('SELECT count(*) AS n FROM leases WHERE num NOT IN (SELECT num FROM runs)')).toBe(0);
    db.close();
    a.close();
    b.close();
  });
});

describePg('deletes racing claims on PostgreSQL', () => {
  const schema = schemaName();
  const pool = skipReason === undefined ? testPool({ max: 2 }) : undefined;
  afterAll(async () => {
    await dropSchema(pool!, schema);
    await pool!.end();
  });

  it('every run is whole or gone, and no row of a deleted run is left', async () => {
    const a = await PostgresStore.open({ connectionString: pgUrl, schema, poolSize: 3 });
    const b = new PostgresStore({ connectionString: pgUrl, schema, poolSize: 3 });
    try {
      const ids = await waitingRuns(a, 'p');
      await Promise.all([worker(b), deleter(a, ids)]);
      await checkWholeOrGone(a, ids);
      const n = async (table: string) =>
        Number(
          (
            await pool!.query(
              `SELECT count(*) AS n FROM "${schema}".${table} WHERE run_id NOT IN (SELECT id FROM "${schema}".runs)`,
            )
          ).rows[0].n,
        );
      for (const table of ['events', 'snapshots', 'inbox', 'tasks', 'timers', 'waits'])
        expect(await n(table), table).toBe(0);
    } finally {
      await a.close();
      await b.close();
    }
  });
});
