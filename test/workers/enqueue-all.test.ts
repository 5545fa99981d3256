import { expect, it, vi } from 'vitest';
import { z } from 'zod';
import { END, enqueue, enqueueAll, graph, inspect, Worker } from '../../src/index.js';
import { describePg, pgStoreForFile } from '../store/fixtures/postgres.js';

// enqueueAll: a batch of runs for the workers in one statement, all or none.

const db = pgStoreForFile();

const triage = graph('triage-batch', {
  state: z.object({ issue: z.string(), label: z.string().default('') }),
})
  .node('label', (s) => ({ label: s.issue.includes('crash') ? 'bug' : 'question' }))
  .edge('label', END)
  .entry('label')
  .compile();

describePg('enqueueAll', () => {
  it('records every run in one statement, wakes the workers once, and each run ends', async () => {
    const creates = vi.spyOn(db.store, 'createRuns');
    try {
      const issues = Array.from({ length: 50 }, (_, i) => ({
        issue: i % 2 === 0 ? `crash ${i}` : `how ${i}`,
      }));
      const ids = await enqueueAll(db.store, triage, issues, { labels: { batch: 'nightly' } });
      expect(ids).toHaveLength(50);
      expect(new Set(ids).size).toBe(50);
      expect(creates).toHaveBeenCalledTimes(1);
      // One wake-up for them all, written by that statement: in the first run's inbox.
      const { rows } = await db.pool.query(
        `SELECT run_id, attempt FROM "${db.schema}".inbox ORDER BY id`,
      );
      expect(rows).toEqual([{ run_id: ids[0], attempt: null }]);
      expect(await db.store.listRuns({ labels: { batch: 'nightly' }, limit: 100 })).toHaveLength(
        50,
      );

      const stop = new AbortController();
      const working = new Worker(db.store, [triage], { pollMs: 50 }).run(stop.signal);
      try {
        for (let i = 0; ; i++) {
          const done = await db.store.listRuns({ status: 'succeeded', limit: 100 });
          if (done.length === 50) break;
          if (i > 500) throw new Error(`only ${done.length} of 50 runs succeeded`);
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      } finally {
        stop.abort();
        await working;
      }
      expect((await inspect(db.store, triage, ids[0]!)).snapshot.state.label).toBe('bug');
      expect((await inspect(db.store, triage, ids[1]!)).snapshot.state.label).toBe('question');
    } finally {
      vi.restoreAllMocks();
    }
  });

  it('gives each run the id asked for, in order', async () => {
    const ids = await enqueueAll(db.store, triage, [{ issue: 'a' }, { issue: 'b' }], {
      runIds: ['first', 'second'],
    });
    expect(ids).toEqual(['first', 'second']);
    expect((await db.store.getRun('second'))?.status).toBe('running');
  });

  it('an input the graph refuses refuses the batch, naming its position; nothing is recorded', async () => {
    await expect(
      enqueueAll(db.store, triage, [{ issue: 'fine' }, { issue: 42 } as never, { issue: 'fine' }]),
    ).rejects.toMatchObject({ code: 'INPUT_INVALID', message: expect.stringContaining('input 1') });
    expect(await db.store.listRuns({})).toEqual([]);
  });

  it('an id that exists already refuses the batch: none of its runs is recorded', async () => {
    await enqueueAll(db.store, triage, [{ issue: 'a' }], { runIds: ['taken'] });
    await expect(
      enqueueAll(db.store, triage, [{ issue: 'b' }, { issue: 'c' }], { runIds: ['new', 'taken'] }),
    ).rejects.toMatchObject({ code: 'RUN_EXISTS', details: { runId: 'taken' } });
    expect(await db.store.getRun('new')).toBeUndefined();
    await expect(
      enqueueAll(db.store, triage, [{ issue: 'b' }, { issue: 'c' }], {
        runIds: ['twice', 'twice'],
      }),
    ).rejects.toMatchObject({ code: 'RUN_EXISTS' });
    expect(await db.store.getRun('twice')).toBeUndefined();
    // Nor a wake-up: the first batch's is the only one.
    const { rows } = await db.pool.query(`SELECT run_id FROM "${db.schema}".inbox`);
    expect(rows).toEqual([{ run_id: 'taken' }]);
  });

  it('enqueue of one run is that statement too; an id taken is refused as createRun refuses it', async () => {
    await enqueue(db.store, triage, { issue: 'a' }, { runId: 'one' });
    await expect(enqueue(db.store, triage, { issue: 'b' }, { runId: 'one' })).rejects.toMatchObject(
      {
        code: 'RUN_EXISTS',
        message: 'RUN_EXISTS: run "one" exists already',
        details: { runId: 'one' },
      },
    );
    expect((await inspect(db.store, triage, 'one')).snapshot.state.issue).toBe('a');
    const { rows } = await db.pool.query(`SELECT run_id FROM "${db.schema}".inbox`);
    expect(rows).toEqual([{ run_id: 'one' }]);
  });

  it('without wake, createRuns writes no wake-up', async () => {
    await enqueueAll(db.store, triage, [{ issue: 'a' }], { runIds: ['woken'] });
    const { rows: before } = await db.pool.query(`SELECT run_id FROM "${db.schema}".inbox`);
    const creates = vi.spyOn(db.store, 'createRuns');
    try {
      await enqueueAll(db.store, triage, [{ issue: 'b' }], { runIds: ['also'] });
      const [runs] = creates.mock.calls[0]!;
      await db.store.createRuns(runs.map((r) => ({ ...r, id: `${r.id}-quiet` })));
    } finally {
      vi.restoreAllMocks();
    }
    expect(await db.store.getRun('also-quiet')).toBeDefined();
    const { rows } = await db.pool.query(`SELECT run_id FROM "${db.schema}".inbox ORDER BY id`);
    expect(rows).toEqual([...before, { run_id: 'also' }]);
  });

  it('ids for some inputs but not all is refused before anything is recorded', async () => {
    await expect(
      enqueueAll(db.store, triage, [{ issue: 'a' }, { issue: 'b' }], { runIds: ['one'] }),
    ).rejects.toMatchObject({ code: 'OPTIONS_INVALID' });
    expect(await db.store.listRuns({})).toEqual([]);
  });
});
