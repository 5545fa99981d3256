import { keepsLimits } from '../../store/limits.js';
import { memo, newRun, step, wait } from './samples.js';
import type { Section } from './section.js';

/** Deleting runs: all of a run or none of it, and the runs a delete refuses. */
export function removalSuite(t: Section): void {
  const { describe, beforeEach, it, expect, rejectsWith } = t;
  describe('deleting runs', () => {
    /** A run that ended, with a row in every table a run owns. */
    async function finished(id: string, status: 'succeeded' | 'failed' = 'succeeded') {
      await t.store.createRun(newRun(id));
      await t.store.commit(
        id,
        step(1, {
          waits: { open: [wait(id, `${id}/q1`)] },
          timers: { set: [{ runId: id, id: 'deadline', at: 9_000 }] },
        }),
      );
      await t.store.recordEffect({ runId: id, key: 'mail', result: '"sent"', at: 1_500 });
      await t.store.putMemo(memo({ runId: id, inputHash: `in-${id}` }));
      await t.store.commit(
        id,
        step(2, { status, snapshot: '{"at":2}', timers: { clear: ['deadline'] } }),
      );
    }

    beforeEach(async () => {
      await finished('keep');
    });

    it('deletes a finished run with its history, waits, effects, timers and memos, and nothing of another run', async () => {
      await finished('r1');
      const deleted = await t.store.deleteRun('r1');
      expect(deleted).toEqual({ id: 'r1', graph: 'claims', status: 'succeeded', createdAt: 1_000 });
      expect(await t.store.getRun('r1')).toBeUndefined();
      expect(await t.store.loadRun('r1')).toBeUndefined();
      expect(await t.store.snapshotAt('r1', 0)).toBeUndefined();
      expect((await t.store.listRuns()).map((r) => r.id)).toEqual(['keep']);
      expect(await t.store.findMemo('claims', 'search', 1, 'in-r1')).toBeUndefined();
      await rejectsWith(t.store.events('r1'), 'RUN_NOT_FOUND');
      expect(await t.store.dueTimers(10_000)).toEqual([]);
      // The other run is whole.
      expect((await t.store.loadRun('keep'))?.run.seq).toBe(2);
      expect(await t.store.listWaits('keep')).toHaveLength(1);
      expect(await t.store.listEffects('keep')).toHaveLength(1);
      expect(await t.store.findMemo('claims', 'search', 1, 'in-keep')).toMatchObject({
        runId: 'keep',
      });
    });

    it('a run deleted is not found again, and its id may start a new run from scratch', async () => {
      await finished('r1', 'failed');
      await t.store.deleteRun('r1');
      await rejectsWith(t.store.deleteRun('r1'), 'RUN_NOT_FOUND');
      await t.store.createRun(newRun('r1', { createdAt: 5_000 }));
      await t.store.commit('r1', step(1));
      const loaded = await t.store.loadRun('r1');
      expect(loaded?.run).toMatchObject({ seq: 1, status: 'running', createdAt: 5_000 });
      expect(loaded?.events.map((e) => e.seq)).toEqual([1]);
      expect(await t.store.listWaits('r1')).toEqual([]);
      expect(await t.store.listEffects('r1')).toEqual([]);
    });

    it('refuses a running run with RUN_LIVE, force or not, and deletes nothing', async () => {
      await t.store.createRun(newRun('r1'));
      await t.store.commit('r1', step(1));
      await rejectsWith(t.store.deleteRun('r1'), 'RUN_LIVE');
      await rejectsWith(t.store.deleteRun('r1', { force: true }), 'RUN_LIVE');
      expect((await t.store.loadRun('r1'))?.events).toHaveLength(1);
    });

    it('refuses a waiting run with RUN_WAITING unless forced, and a live lease with RUN_LIVE even then', async () => {
      await t.store.createRun(newRun('r1'));
      await t.store.commit(
        'r1',
        step(1, { status: 'waiting', waits: { open: [wait('r1', 'q')] } }),
      );
      await rejectsWith(t.store.deleteRun('r1'), 'RUN_WAITING');
      expect(await t.store.listWaits('r1', { open: true })).toHaveLength(1);
      const lease = await t.store.acquire('r1', { owner: 'driver', leaseMs: 60_000 });
      await rejectsWith(t.store.deleteRun('r1', { force: true }), 'RUN_LIVE');
      await t.store.release(lease);
      await t.store.deleteRun('r1', { force: true });
      expect(await t.store.getRun('r1')).toBeUndefined();
    });

    it('refuses a run that an unfinished run reads outputs from with RUN_REFERENCED, until it finishes', async () => {
      await finished('source');
      await t.store.createRun(newRun('rewound', { sources: ['source'] }));
      await rejectsWith(t.store.deleteRun('source'), 'RUN_REFERENCED');
      await t.store.commit('rewound', step(1, { status: 'succeeded', snapshot: '{}' }));
      await t.store.deleteRun('source');
      // Deleting the run that read from it takes its sources with it.
      await t.store.deleteRun('rewound');
      expect((await t.store.listRuns()).map((r) => r.id)).toEqual(['keep']);
    });

    it("a queued run of a concurrency limit is deleted with its place in line, and a finished one's slot stays free", async () => {
      const store = t.store;
      if (!keepsLimits(store)) return;
      const limit = { key: 'k', concurrency: 1 };
      await store.createRun(newRun('a', { createdAt: 1_000, limit }));
      await store.createRun(newRun('b', { createdAt: 1_001, limit }));
      await store.createRun(newRun('c', { createdAt: 1_002, limit }));
      await rejectsWith(store.deleteRun('b'), 'RUN_WAITING');
      await store.deleteRun('b', { force: true });
      expect(await store.runLimit('b')).toBeUndefined();
      expect((await store.listQueued()).map((q) => q.runId)).toEqual(['c']);
      await store.commit('a', step(1, { status: 'succeeded', snapshot: '{}' }));
      await store.deleteRun('a');
      expect(await store.runLimit('a')).toBeUndefined();
      expect(await store.runLimit('c')).toMatchObject({ state: 'active' });
      expect(await store.activeCount('claims', 'k')).toBe(1);
    });

    it('of a delete and a commit racing on one waiting run, the run is whole or gone', async () => {
      await t.store.createRun(newRun('r1'));
      await t.store.commit('r1', step(1, { status: 'waiting' }));
      const [deleted, committed] = await Promise.allSettled([
        t.store.deleteRun('r1', { force: true }),
        t.store.commit('r1', step(2, { status: 'cancelled', snapshot: '{}' })),
      ]);
      const loaded = await t.store.loadRun('r1');
      if (deleted.status === 'fulfilled') {
        expect(loaded).toBeUndefined();
        // Nothing of it is left behind: the same id starts afresh, with no event of the old run.
        await t.store.createRun(newRun('r1'));
        expect((await t.store.loadRun('r1'))?.events).toEqual([]);
        expect((await t.store.snapshotAt('r1', 5))?.seq).toBe(0);
      } else {
        expect(committed.status).toBe('fulfilled');
        expect(loaded?.run.status).toBe('cancelled');
      }
      await rejectsWith(t.store.deleteRun('missing'), 'RUN_NOT_FOUND');
    });
  });
}
