import { newRun, step } from './samples.js';
import type { Section } from './section.js';

/** Ownership: one lease per run, by the store clock. */
export function ownershipSuite(t: Section): void {
  const { describe, it, expect, rejectsWith } = t;
  describe('ownership: one lease per run', () => {
    const me = { owner: 'me', host: 'host-a', pid: 101, leaseMs: 60_000 };
    const other = { owner: 'other', host: 'host-b', pid: 202, leaseMs: 60_000 };

    it('a first lease has epoch 1 and expires leaseMs from now by the store clock', async () => {
      await t.store.createRun(newRun('r1'));
      const before = Date.now();
      const lease = await t.store.acquire('r1', me);
      expect(lease).toMatchObject({ runId: 'r1', owner: 'me', epoch: 1 });
      // The store's clock decides; a database on this machine agrees with ours within seconds.
      expect(Math.abs(lease.expiresAt - (before + 60_000)) < 10_000).toBe(true);
      expect((await t.store.getRun('r1'))?.lease).toEqual({
        owner: 'me',
        host: 'host-a',
        pid: 101,
        epoch: 1,
        expiresAt: lease.expiresAt,
        live: true,
      });
    });

    it('a live lease refuses another owner with RUN_OWNED, naming who holds it and until when', async () => {
      await t.store.createRun(newRun('r1'));
      const held = await t.store.acquire('r1', me);
      await expect(t.store.acquire('r1', other)).rejects.toMatchObject({
        code: 'RUN_OWNED',
        details: {
          runId: 'r1',
          owner: 'me',
          host: 'host-a',
          pid: 101,
          epoch: 1,
          expiresAt: held.expiresAt,
        },
      });
      expect((await t.store.getRun('r1'))?.lease).toMatchObject({ owner: 'me', epoch: 1 });
    });

    it('the same owner acquiring again keeps its epoch', async () => {
      await t.store.createRun(newRun('r1'));
      await t.store.acquire('r1', me);
      expect((await t.store.acquire('r1', me)).epoch).toBe(1);
    });

    it('a released or expired lease is taken by another owner with the next epoch', async () => {
      await t.store.createRun(newRun('r1'));
      const mine = await t.store.acquire('r1', me);
      await t.store.release(mine);
      expect((await t.store.getRun('r1'))?.lease).toMatchObject({ live: false, expiresAt: 0 });
      const theirs = await t.store.acquire('r1', { ...other, leaseMs: 1 });
      expect(theirs.epoch).toBe(2);
      await new Promise((resolve) => setTimeout(resolve, 30));
      expect((await t.store.getRun('r1'))?.lease?.live).toBe(false);
      expect((await t.store.acquire('r1', me)).epoch).toBe(3);
    });

    it('a take-over at the epoch seen wins a live lease; at any other epoch it is refused', async () => {
      await t.store.createRun(newRun('r1'));
      await t.store.acquire('r1', me);
      await rejectsWith(t.store.acquire('r1', { ...other, takeOver: 7 }), 'RUN_OWNED');
      expect((await t.store.acquire('r1', { ...other, takeOver: 1 })).epoch).toBe(2);
      // The dead owner's twin, taking over at the same epoch, now finds a live owner.
      await rejectsWith(
        t.store.acquire('r1', { owner: 'third', leaseMs: 1_000, takeOver: 1 }),
        'RUN_OWNED',
      );
    });

    it("commits are fenced by the lease's epoch: the old owner's are refused with LEASE_LOST and write nothing", async () => {
      await t.store.createRun(newRun('r1'));
      const old = await t.store.acquire('r1', me);
      await t.store.commit('r1', step(1, { epoch: old.epoch }));
      await t.store.acquire('r1', { ...other, takeOver: old.epoch });
      await rejectsWith(
        t.store.commit(
          'r1',
          step(2, {
            epoch: old.epoch,
            snapshot: '{"late":true}',
            timers: { set: [{ runId: 'r1', id: 't', at: 5 }] },
          }),
        ),
        'LEASE_LOST',
      );
      expect((await t.store.getRun('r1'))?.seq).toBe(1);
      expect(await t.store.listTimers('r1')).toEqual([]);
      await t.store.commit('r1', step(2, { epoch: 2 }));
      // Without an epoch, a commit is fenced by its seq alone (a cancellation from outside).
      await t.store.commit('r1', step(3));
      expect((await t.store.getRun('r1'))?.seq).toBe(3);
    });

    it('a commit under an epoch on a run nobody leased is refused', async () => {
      await t.store.createRun(newRun('r1'));
      await rejectsWith(t.store.commit('r1', step(1, { epoch: 1 })), 'LEASE_LOST');
    });

    it('renews many leases in one call, and reports those another owner took as lost', async () => {
      await t.store.createRun(newRun('r1'));
      await t.store.createRun(newRun('r2'));
      const a = await t.store.acquire('r1', { ...me, leaseMs: 1_000 });
      const b = await t.store.acquire('r2', { ...me, leaseMs: 1_000 });
      await t.store.release(b);
      await t.store.acquire('r2', other);
      const { renewed, lost } = await t.store.renew([a, b], 120_000);
      expect(lost).toEqual(['r2']);
      expect(renewed).toHaveLength(1);
      expect(renewed[0]?.runId).toBe('r1');
      expect(renewed[0]!.expiresAt > a.expiresAt).toBe(true);
      expect((await t.store.getRun('r1'))?.lease?.expiresAt).toBe(renewed[0]?.expiresAt);
    });

    it('a last commit may give its lease up with it: another owner takes the run at once, and no renewal takes it back', async () => {
      await t.store.createRun(newRun('r1'));
      const mine = await t.store.acquire('r1', me);
      await t.store.commit(
        'r1',
        step(1, { epoch: mine.epoch, status: 'failed', snapshot: '{"at":1}', release: true }),
      );
      expect((await t.store.getRun('r1'))?.lease).toMatchObject({ live: false, expiresAt: 0 });
      expect((await t.store.renew([mine], 60_000)).lost).toEqual(['r1']);
      expect((await t.store.acquire('r1', other)).epoch).toBe(2);
    });

    it('a stale lease releases nothing', async () => {
      await t.store.createRun(newRun('r1'));
      const old = await t.store.acquire('r1', { ...me, leaseMs: 1 });
      await new Promise((resolve) => setTimeout(resolve, 20));
      await t.store.acquire('r1', other);
      await t.store.release(old);
      expect((await t.store.getRun('r1'))?.lease).toMatchObject({ owner: 'other', live: true });
    });

    it('a lease on a run that does not exist is RUN_NOT_FOUND', async () => {
      await rejectsWith(t.store.acquire('nope', me), 'RUN_NOT_FOUND');
    });

    it('listing runs shows each run with its lease', async () => {
      await t.store.createRun(newRun('r1', { createdAt: 1 }));
      await t.store.createRun(newRun('r2', { createdAt: 2 }));
      await t.store.acquire('r1', me);
      expect((await t.store.listRuns()).map((r) => [r.id, r.lease?.owner ?? null])).toEqual([
        ['r2', null],
        ['r1', 'me'],
      ]);
    });
  });
}
