import { keepsLimits } from '../../store/limits.js';
import { servesWorkers } from '../../store/work-queue.js';
import { newRun, step } from './samples.js';
import type { Section } from './section.js';

/** Concurrency limits: admission as runs are created, and slots handed on as runs stop running. */
export function limitsSuite(t: Section): void {
  const { describe, it, expect } = t;
  const limit = { key: 'c1', concurrency: 2 };
  const limited = (id: string, at = 1_000, key = 'c1') =>
    newRun(id, { createdAt: at, limit: { ...limit, key } });
  const stores = () => {
    const store = t.store;
    if (!keepsLimits(store)) throw new Error('the store keeps no concurrency limits');
    return store;
  };

  describe('concurrency limits', () => {
    it('admits runs of a key up to its concurrency; the next is recorded waiting, queued', async () => {
      const store = stores();
      await store.createRun(limited('r1', 1_000));
      await store.createRun(limited('r2', 1_001));
      await store.createRun(limited('r3', 1_002));
      await store.createRun(limited('other', 1_003, 'c2'));
      expect((await store.getRun('r2'))?.status).toBe('running');
      expect((await store.getRun('r3'))?.status).toBe('waiting');
      expect((await store.getRun('other'))?.status).toBe('running');
      expect(await store.runLimit('r3')).toEqual({
        runId: 'r3',
        graph: 'claims',
        key: 'c1',
        concurrency: 2,
        state: 'queued',
        since: 1_002,
      });
      expect(await store.activeCount('claims', 'c1')).toBe(2);
      expect((await store.listQueued()).map((q) => q.runId)).toEqual(['r3']);
      expect(await store.runLimit('unlimited')).toBeUndefined();
    });

    it('a run that stops running hands its slot to the oldest queued run, with a wake-up', async () => {
      const store = stores();
      for (const [i, id] of ['r1', 'r2', 'r3', 'r4'].entries())
        await store.createRun(limited(id, 1_000 + i));
      await store.commit('r1', step(1, { status: 'waiting', at: 5_000 }));
      expect(await store.runLimit('r1')).toMatchObject({ state: 'idle', since: 5_000 });
      expect(await store.runLimit('r3')).toMatchObject({ state: 'active', since: 5_000 });
      expect(await store.runLimit('r4')).toMatchObject({ state: 'queued' });
      if (servesWorkers(store)) expect(await store.inbox('r3')).toMatchObject([{ attempt: null }]);
      // The run answered runs again: it holds a slot again, counted, so the queue waits longer.
      await store.commit('r1', step(2, { status: 'running', at: 6_000 }));
      expect(await store.runLimit('r1')).toMatchObject({ state: 'active' });
      await store.commit('r2', step(1, { status: 'succeeded', at: 7_000 }));
      expect(await store.runLimit('r4')).toMatchObject({ state: 'queued' });
      await store.commit('r1', step(3, { status: 'failed', at: 7_001 }));
      expect(await store.runLimit('r4')).toMatchObject({ state: 'active', since: 7_001 });
      expect(await store.listQueued()).toEqual([]);
      expect(await store.activeCount('claims', 'c1')).toBe(2);
    });

    it('a queued run cancelled leaves the queue without taking a slot', async () => {
      const store = stores();
      for (const [i, id] of ['r1', 'r2', 'r3', 'r4'].entries())
        await store.createRun(limited(id, 1_000 + i));
      await store.commit('r3', step(1, { status: 'cancelled', at: 2_000 }));
      expect(await store.runLimit('r3')).toMatchObject({ state: 'idle' });
      await store.commit('r1', step(1, { status: 'succeeded', at: 3_000 }));
      expect(await store.runLimit('r4')).toMatchObject({ state: 'active' });
      expect(await store.activeCount('claims', 'c1')).toBe(2);
    });

    it('lists queued runs oldest first, by graph and key, up to a limit', async () => {
      const store = stores();
      for (const [i, id] of ['r1', 'r2', 'r3', 'r4', 'r5'].entries())
        await store.createRun(limited(id, 1_000 + i));
      for (const [i, id] of ['s1', 's2', 's3'].entries())
        await store.createRun(limited(id, 2_000 + i, 'c2'));
      expect((await store.listQueued()).map((q) => q.runId)).toEqual(['r3', 'r4', 'r5', 's3']);
      expect((await store.listQueued({ key: 'c2' })).map((q) => q.runId)).toEqual(['s3']);
      expect((await store.listQueued({ graph: 'claims', limit: 2 })).map((q) => q.runId)).toEqual([
        'r3',
        'r4',
      ]);
      expect(await store.listQueued({ graph: 'other' })).toEqual([]);
    });

    it('of runs created at once for the last slot, one takes it', async () => {
      const store = stores();
      await store.createRun(limited('r1', 1_000));
      await Promise.all(['r2', 'r3', 'r4'].map((id, i) => store.createRun(limited(id, 1_001 + i))));
      expect(await store.activeCount('claims', 'c1')).toBe(2);
      expect(await store.listQueued()).toHaveLength(2);
    });
  });
}
