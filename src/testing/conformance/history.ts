import { storeFormatVersion } from '../../store/store.js';
import { commitSteps, newRun, step, wait } from './samples.js';
import type { Section } from './section.js';

/** Runs and their history, run ids and sequence numbers. */
export function historySuite(t: Section): void {
  const { describe, it, expect, rejectsWith } = t;
  describe('runs and their history', () => {
    it('a new run loads with its first snapshot at seq 0, no events, and the current store format', async () => {
      await t.store.createRun(newRun('r1', { snapshot: '{"at":0}' }));
      const loaded = await t.store.loadRun('r1');
      expect(loaded).toEqual({
        run: {
          id: 'r1',
          graph: 'claims',
          graphHash: 'hash-1',
          graphVersion: 1,
          stateVersion: 1,
          format: storeFormatVersion,
          status: 'running',
          seq: 0,
          createdAt: 1_000,
          updatedAt: 1_000,
          error: null,
          labels: null,
          lease: null,
        },
        snapshot: { seq: 0, data: '{"at":0}' },
        events: [],
      });
      expect(await t.store.getRun('r1')).toEqual(loaded?.run);
    });

    it('keeps the labels a run was created with, as given, and null when it had none', async () => {
      await t.store.createRun(newRun('r1', { labels: '{"graphFile":"/tmp/g.ts"}' }));
      await t.store.createRun(newRun('r2'));
      expect((await t.store.getRun('r1'))?.labels).toBe('{"graphFile":"/tmp/g.ts"}');
      expect((await t.store.loadRun('r1'))?.run.labels).toBe('{"graphFile":"/tmp/g.ts"}');
      expect((await t.store.getRun('r2'))?.labels).toBeNull();
      expect((await t.store.listRuns()).map((r) => [r.id, r.labels])).toEqual([
        ['r2', null],
        ['r1', '{"graphFile":"/tmp/g.ts"}'],
      ]);
    });

    it('a commit moves the run to its seq, status, error and time', async () => {
      await t.store.createRun(newRun('r1'));
      await t.store.commit('r1', step(1));
      await t.store.commit(
        'r1',
        step(2, { status: 'failed', error: '{"code":"NODE_FAILED"}', snapshot: '{"at":2}' }),
      );
      expect(await t.store.getRun('r1')).toMatchObject({
        seq: 2,
        status: 'failed',
        error: '{"code":"NODE_FAILED"}',
        createdAt: 1_000,
        updatedAt: 1_002,
      });
    });

    it('loading reads the latest snapshot and only the events after it, in order', async () => {
      await t.store.createRun(newRun('r1'));
      await commitSteps(t.store, 'r1', 1, 7, [3, 5]);
      const loaded = await t.store.loadRun('r1');
      expect(loaded?.snapshot).toEqual({ seq: 5, data: '{"at":5}' });
      expect(loaded?.events.map((e) => e.seq)).toEqual([6, 7]);
      expect(loaded?.events[0]).toEqual({
        seq: 6,
        at: 1_006,
        event: '{"type":"completed","seq":6}',
        trace: null,
      });
    });

    it('keeps only the first and the newest snapshot: snapshotAt finds the first for rewinding', async () => {
      await t.store.createRun(newRun('r1'));
      await commitSteps(t.store, 'r1', 1, 7, [3, 5]);
      expect((await t.store.snapshotAt('r1', 0))?.seq).toBe(0);
      expect((await t.store.snapshotAt('r1', 4))?.seq).toBe(0); // the one at 3 was dropped for 5
      expect(await t.store.snapshotAt('r1', 99)).toEqual({ seq: 5, data: '{"at":5}' });
      expect(await t.store.snapshotAt('nope', 3)).toBeUndefined();
      expect((await t.store.usage('r1')).snapshots).toBe(2);
    });

    it('a run that stopped with a snapshot loads with no events to replay', async () => {
      await t.store.createRun(newRun('r1'));
      await commitSteps(t.store, 'r1', 1, 2);
      await t.store.commit('r1', step(3, { status: 'succeeded', snapshot: '{"done":true}' }));
      const loaded = await t.store.loadRun('r1');
      expect(loaded?.snapshot).toEqual({ seq: 3, data: '{"done":true}' });
      expect(loaded?.events).toEqual([]);
      expect(loaded?.run.status).toBe('succeeded');
    });

    it('stored text comes back exactly as written, whatever its characters and size', async () => {
      const event = JSON.stringify({
        note: 'naïve café — 日本語 🚀 "quoted" \\ \n\t',
        pad: 'x'.repeat(100_000),
      });
      const trace = JSON.stringify([{ node: 'plan', status: 'completed' }]);
      await t.store.createRun(newRun('r1', { snapshot: '{"emoji":"🧭"}' }));
      await t.store.commit('r1', step(1, { event, trace }));
      const loaded = await t.store.loadRun('r1');
      expect(loaded?.snapshot.data).toBe('{"emoji":"🧭"}');
      expect(loaded?.events[0]?.event).toBe(event);
      expect(loaded?.events[0]?.trace).toBe(trace);
    });

    it('events(afterSeq) returns the committed events after that seq, in order; all by default', async () => {
      await t.store.createRun(newRun('r1'));
      await commitSteps(t.store, 'r1', 1, 5, [2]);
      expect((await t.store.events('r1')).map((e) => e.seq)).toEqual([1, 2, 3, 4, 5]);
      expect((await t.store.events('r1', 3)).map((e) => e.seq)).toEqual([4, 5]);
      expect(await t.store.events('r1', 5)).toEqual([]);
    });

    it("a run's events do not leak into another run's history", async () => {
      await t.store.createRun(newRun('r1'));
      await t.store.createRun(newRun('r2'));
      await commitSteps(t.store, 'r1', 1, 3);
      await commitSteps(t.store, 'r2', 1, 1);
      expect((await t.store.events('r2')).map((e) => e.seq)).toEqual([1]);
      expect((await t.store.loadRun('r2'))?.events).toHaveLength(1);
      // Whatever afterSeq says: below 0, not a number, past the end.
      expect((await t.store.events('r2', -5)).map((e) => e.seq)).toEqual([1]);
      expect((await t.store.events('r2', Number.NaN)).map((e) => e.seq)).toEqual([1]);
      expect(await t.store.events('r1', Number.POSITIVE_INFINITY)).toEqual([]);
    });

    it('usage counts events and snapshots and their size in UTF-8 bytes, traces included', async () => {
      await t.store.createRun(newRun('r1', { snapshot: '"é"' })); // 4 bytes
      await t.store.commit('r1', step(1, { event: '"日本"', trace: '[1]' })); // 8 + 3 bytes
      await t.store.commit('r1', step(2, { event: '{}', snapshot: '"ab"' })); // 2 + 4 bytes
      expect(await t.store.usage('r1')).toEqual({
        events: 2,
        eventBytes: 13,
        snapshots: 2,
        snapshotBytes: 8,
      });
    });

    it('a run with no commits uses one snapshot and no events', async () => {
      await t.store.createRun(newRun('r1', { snapshot: '{}' }));
      expect(await t.store.usage('r1')).toEqual({
        events: 0,
        eventBytes: 0,
        snapshots: 1,
        snapshotBytes: 2,
      });
    });
  });

  describe('run ids and sequence numbers', () => {
    it('creating a run under a taken id fails with RUN_EXISTS and leaves the first run as it was', async () => {
      await t.store.createRun(newRun('r1', { graph: 'first', snapshot: '{"first":true}' }));
      await t.store.commit('r1', step(1));
      await rejectsWith(t.store.createRun(newRun('r1', { graph: 'second' })), 'RUN_EXISTS');
      const loaded = await t.store.loadRun('r1');
      expect(loaded?.run).toMatchObject({ graph: 'first', seq: 1 });
      expect(loaded?.snapshot).toEqual({ seq: 0, data: '{"first":true}' });
    });

    it('an unknown run loads as undefined and is not listed', async () => {
      expect(await t.store.loadRun('nope')).toBeUndefined();
      expect(await t.store.getRun('nope')).toBeUndefined();
      expect(await t.store.listRuns()).toEqual([]);
    });

    it('a commit, events, usage, effect or wait for a missing run fails with RUN_NOT_FOUND', async () => {
      await rejectsWith(t.store.commit('nope', step(1)), 'RUN_NOT_FOUND');
      await rejectsWith(t.store.events('nope'), 'RUN_NOT_FOUND');
      await rejectsWith(t.store.usage('nope'), 'RUN_NOT_FOUND');
      await rejectsWith(
        t.store.recordEffect({ runId: 'nope', key: 'k', result: '1', at: 1 }),
        'RUN_NOT_FOUND',
      );
      await rejectsWith(t.store.getEffect('nope', 'k'), 'RUN_NOT_FOUND');
      await rejectsWith(t.store.openWait(wait('nope', 'q1')), 'RUN_NOT_FOUND');
      await rejectsWith(t.store.answerWait('nope', 'q1', '"yes"', 'ana', 1), 'RUN_NOT_FOUND');
      await rejectsWith(t.store.listWaits('nope'), 'RUN_NOT_FOUND');
      expect(await t.store.getRun('nope')).toBeUndefined();
    });

    it('a commit for a stale seq fails with STORE_CONFLICT and stores nothing of it', async () => {
      await t.store.createRun(newRun('r1'));
      await commitSteps(t.store, 'r1', 1, 2);
      const stale = t.store.commit(
        'r1',
        step(2, { event: '"stale"', status: 'failed', snapshot: '"s"' }),
      );
      await expect(stale).rejects.toMatchObject({
        code: 'STORE_CONFLICT',
        details: { runId: 'r1', current: 2, attempted: 2 },
      });
      const loaded = await t.store.loadRun('r1');
      expect(loaded?.run).toMatchObject({ seq: 2, status: 'running', updatedAt: 1_002 });
      expect(loaded?.snapshot.seq).toBe(0);
      expect(loaded?.events.map((e) => e.event)).not.toContain('"stale"');
      expect((await t.store.usage('r1')).snapshots).toBe(1);
    });

    it('a commit that skips a seq fails with STORE_CONFLICT: history has no gaps', async () => {
      await t.store.createRun(newRun('r1'));
      await rejectsWith(t.store.commit('r1', step(2)), 'STORE_CONFLICT');
      expect(await t.store.events('r1')).toEqual([]);
      expect((await t.store.getRun('r1'))?.seq).toBe(0);
    });

    it('of two commits racing for the same seq exactly one is stored; the other fails with STORE_CONFLICT', async () => {
      await t.store.createRun(newRun('r1'));
      const a = step(1, { event: '"a"', status: 'succeeded', snapshot: '"snapshot a"' });
      const b = step(1, { event: '"b"', status: 'failed', error: '"b failed"' });
      const results = await Promise.allSettled([t.store.commit('r1', a), t.store.commit('r1', b)]);

      const won = results.flatMap((r, i) => (r.status === 'fulfilled' ? [[a, b][i]!] : []));
      const lost = results.flatMap((r) => (r.status === 'rejected' ? [r.reason] : []));
      expect(won).toHaveLength(1);
      expect(lost).toMatchObject([{ code: 'STORE_CONFLICT' }]);
      const winner = won[0]!;
      const loaded = await t.store.loadRun('r1');
      expect(loaded?.run).toMatchObject({ seq: 1, status: winner.status, error: winner.error });
      expect(await t.store.events('r1')).toEqual([
        { seq: 1, at: winner.at, event: winner.event, trace: null },
      ]);
      expect((await t.store.usage('r1')).snapshots).toBe(winner.snapshot === null ? 1 : 2);
    });
  });
}
