import { expect, it } from 'vitest';
import { z } from 'zod';
import { END, enqueue, graph, Worker } from '../../src/index.js';
import type { ClaimedRun } from '../../src/store/work-queue.js';
import { describePg, pgStoreForFile } from '../store/fixtures/postgres.js';

// A run nobody can fold (its stored data is damaged, or folding it throws) is a poison run. It
// used to be claimed again at every poll, forever, and in a loop after each error: one bad row
// gave 128 claims in 2 s. Now each failure is counted on the run's row and the run is kept out
// of claims for a back-off that doubles; at the limit it fails with FOLD_FAILED, naming the
// last cause, and the worker goes on with the other runs.

const db = pgStoreForFile();

const one = graph('poison-one', { state: z.object({ done: z.boolean().default(false) }) })
  .node('only', () => ({ done: true }))
  .edge('only', END)
  .entry('only')
  .compile();

describePg('poison runs', () => {
  it('a run that cannot be read fails coded after maxFoldFailures claims, and the others finish', async () => {
    await enqueue(db.store, one, {}, { runId: 'damaged' });
    await db.pool.query(`DELETE FROM "${db.schema}".snapshots WHERE run_id = 'damaged'`);
    const good = ['g1', 'g2', 'g3', 'g4', 'g5'];
    for (const runId of good) await enqueue(db.store, one, {}, { runId });

    // Every claim that handed this worker the damaged run.
    let damagedClaims = 0;
    const claim = db.store.claimAndLoadRuns.bind(db.store);
    db.store.claimAndLoadRuns = async (c) => {
      const claimed: ClaimedRun[] = await claim(c);
      damagedClaims += claimed.filter((r) => r.lease.runId === 'damaged').length;
      return claimed;
    };
    const stop = new AbortController();
    const working = new Worker(db.store, [one], { pollMs: 20, maxFoldFailures: 3 }).run(
      stop.signal,
    );
    try {
      for (let i = 0; i < 500; i++) {
        const runs = await db.store.listRuns();
        if (runs.every((r) => r.status !== 'running')) break;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      // The run is failed at its third failed fold, and never claimed after it.
      await new Promise((resolve) => setTimeout(resolve, 200));
    } finally {
      stop.abort();
      await working;
      delete (db.store as { claimAndLoadRuns?: unknown }).claimAndLoadRuns;
    }

    const damaged = await db.store.getRun('damaged');
    expect(damaged?.status).toBe('failed');
    const error = JSON.parse(damaged!.error!) as {
      code: string;
      class: string;
      message: string;
      details: { failures: number; cause: { code: string } };
    };
    expect(error).toMatchObject({
      code: 'FOLD_FAILED',
      class: 'permanent',
      details: { runId: 'damaged', failures: 3, cause: { code: 'STORE_CORRUPT' } },
    });
    expect(error.message).toMatch(/^run damaged could not be folded \(3 times\): STORE_CORRUPT: /);
    expect(damagedClaims).toBe(3);
    for (const runId of good) expect((await db.store.getRun(runId))?.status).toBe('succeeded');
    // Nothing of the failed run is left for a worker to take.
    const { rows } = await db.pool.query(
      `SELECT (SELECT count(*) FROM "${db.schema}".inbox WHERE run_id = 'damaged')::int AS inbox,
              (SELECT count(*) FROM "${db.schema}".tasks WHERE run_id = 'damaged')::int AS tasks`,
    );
    expect(rows[0]).toEqual({ inbox: 0, tasks: 0 });
  }, 30_000);

  it('between failures the run is out of claims: a failed fold keeps its lease for the back-off', async () => {
    await enqueue(db.store, one, {}, { runId: 'backoff' });
    await db.pool.query(`DELETE FROM "${db.schema}".snapshots WHERE run_id = 'backoff'`);
    const claim = {
      owner: 'w1',
      leaseMs: 5_000,
      graphs: [{ name: one.name, hash: one.hash }],
      limit: 10,
    };
    const [first] = await db.store.claimAndLoadRuns(claim);
    expect(first && 'error' in first).toBe(true);
    expect(await db.store.foldFailed(first!.lease, 60_000)).toBe(1);
    // Its lease would have expired by now: the back-off outlasts it.
    expect(await db.store.claimAndLoadRuns({ ...claim, owner: 'w2', leaseMs: 1 })).toEqual([]);
    // A stale holder counts nothing and fails nothing.
    expect(await db.store.foldFailed({ ...first!.lease, epoch: first!.lease.epoch - 1 }, 1)).toBe(
      0,
    );
    expect(
      await db.store.failRun(
        { ...first!.lease, epoch: first!.lease.epoch - 1 },
        { error: '{}', at: 0 },
      ),
    ).toBe(false);
    expect((await db.store.getRun('backoff'))?.status).toBe('running');
  });
});
