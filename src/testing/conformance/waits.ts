import type { WaitRecord } from '../../store/store.js';
import { newRun, step, wait } from './samples.js';
import type { Section } from './section.js';

/** Waits, timers, and waits opened and closed by commits. */
export function waitsSuite(t: Section): void {
  const { describe, beforeEach, it, expect, rejectsWith } = t;
  describe('waits', () => {
    beforeEach(async () => {
      await t.store.createRun(newRun('r1'));
    });

    it('an answer is recorded once, with who gave it and when', async () => {
      await t.store.openWait(wait('r1', 'q1'));
      const answered = await t.store.answerWait('r1', 'q1', '{"ok":true}', 'ana', 2_500);
      expect(answered).toEqual({
        ...wait('r1', 'q1'),
        answer: '{"ok":true}',
        answeredBy: 'ana',
        answeredAt: 2_500,
      });
      expect(await t.store.listWaits('r1')).toEqual([answered]);
    });

    it('a second answer fails with WAIT_ALREADY_ANSWERED and the first one stands', async () => {
      await t.store.openWait(wait('r1', 'q1'));
      await t.store.answerWait('r1', 'q1', '"yes"', 'ana', 2_500);
      await rejectsWith(
        t.store.answerWait('r1', 'q1', '"no"', 'bob', 2_600),
        'WAIT_ALREADY_ANSWERED',
      );
      expect(await t.store.listWaits('r1')).toMatchObject([{ answer: '"yes"', answeredBy: 'ana' }]);
    });

    it('of two answers racing for one wait exactly one wins', async () => {
      await t.store.openWait(wait('r1', 'q1'));
      const results = await Promise.allSettled([
        t.store.answerWait('r1', 'q1', '"yes"', 'ana', 2_500),
        t.store.answerWait('r1', 'q1', '"no"', 'bob', 2_500),
      ]);
      const won = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
      const lost = results.flatMap((r) => (r.status === 'rejected' ? [r.reason] : []));
      expect(won).toHaveLength(1);
      expect(lost).toMatchObject([{ code: 'WAIT_ALREADY_ANSWERED' }]);
      expect(await t.store.listWaits('r1')).toEqual(won);
    });

    it('answering a wait the run does not have fails with WAIT_NOT_FOUND', async () => {
      await t.store.openWait(wait('r1', 'q1'));
      await rejectsWith(t.store.answerWait('r1', 'q2', '"yes"', 'ana', 1), 'WAIT_NOT_FOUND');
      expect(await t.store.listWaits('r1', { open: true })).toHaveLength(1);
    });

    it('opening the same wait again keeps the first record and its answer', async () => {
      await t.store.openWait(wait('r1', 'q1', 2_000));
      await t.store.answerWait('r1', 'q1', '"yes"', 'ana', 2_500);
      await t.store.openWait({ ...wait('r1', 'q1', 9_000), request: '"changed"' });
      expect(await t.store.listWaits('r1')).toMatchObject([
        { openedAt: 2_000, request: wait('r1', 'q1').request, answer: '"yes"' },
      ]);
    });

    it('lists waits oldest first; open: true lists the unanswered ones, open: false the answered', async () => {
      await t.store.openWait(wait('r1', 'late', 3_000));
      await t.store.openWait(wait('r1', 'early', 1_000));
      await t.store.openWait(wait('r1', 'middle', 2_000));
      await t.store.answerWait('r1', 'middle', '"done"', 'ana', 4_000);
      const ids = (waits: WaitRecord[]) => waits.map((w) => w.requestId);
      expect(ids(await t.store.listWaits('r1'))).toEqual(['early', 'middle', 'late']);
      expect(ids(await t.store.listWaits('r1', { open: true }))).toEqual(['early', 'late']);
      expect(ids(await t.store.listWaits('r1', { open: false }))).toEqual(['middle']);
    });

    it('a run with no waits lists none', async () => {
      expect(await t.store.listWaits('r1')).toEqual([]);
      expect(await t.store.listWaits('r1', { open: true })).toEqual([]);
    });
  });

  describe('timers', () => {
    it('a commit sets and clears timers; a set replaces the one of the same id', async () => {
      await t.store.createRun(newRun('r1'));
      await t.store.commit(
        'r1',
        step(1, {
          timers: {
            set: [
              { runId: 'r1', id: 'deadline', at: 9_000 },
              { runId: 'r1', id: 'wait:q', at: 5_000 },
            ],
          },
        }),
      );
      expect(await t.store.listTimers('r1')).toEqual([
        { runId: 'r1', id: 'wait:q', at: 5_000 },
        { runId: 'r1', id: 'deadline', at: 9_000 },
      ]);
      await t.store.commit(
        'r1',
        step(2, {
          timers: { set: [{ runId: 'r1', id: 'deadline', at: 7_000 }], clear: ['wait:q'] },
        }),
      );
      expect(await t.store.listTimers('r1')).toEqual([{ runId: 'r1', id: 'deadline', at: 7_000 }]);
    });

    it('lists the timers due by a time across runs, soonest first, up to a limit', async () => {
      await t.store.createRun(newRun('r1'));
      await t.store.createRun(newRun('r2'));
      await t.store.commit('r1', step(1, { timers: { set: [{ runId: 'r1', id: 'a', at: 300 }] } }));
      await t.store.commit(
        'r2',
        step(1, {
          timers: {
            set: [
              { runId: 'r2', id: 'b', at: 100 },
              { runId: 'r2', id: 'c', at: 900 },
            ],
          },
        }),
      );
      expect(await t.store.dueTimers(500)).toEqual([
        { runId: 'r2', id: 'b', at: 100 },
        { runId: 'r1', id: 'a', at: 300 },
      ]);
      expect(await t.store.dueTimers(500, 1)).toEqual([{ runId: 'r2', id: 'b', at: 100 }]);
      expect(await t.store.dueTimers(50)).toEqual([]);
    });

    it('says when the soonest timer after a time is due, leaving out the ones due already', async () => {
      expect(await t.store.nextTimerAt(0)).toBeUndefined();
      await t.store.createRun(newRun('r1'));
      await t.store.createRun(newRun('r2'));
      await t.store.commit('r1', step(1, { timers: { set: [{ runId: 'r1', id: 'a', at: 300 }] } }));
      await t.store.commit('r2', step(1, { timers: { set: [{ runId: 'r2', id: 'b', at: 100 }] } }));
      expect(await t.store.nextTimerAt(0)).toBe(100);
      expect(await t.store.nextTimerAt(100)).toBe(300);
      expect(await t.store.nextTimerAt(300)).toBeUndefined();
    });
  });

  describe('waits opened and closed by commits', () => {
    it('a commit opens its waits with the step, and a later one closes them unanswered', async () => {
      await t.store.createRun(newRun('r1'));
      await t.store.commit(
        'r1',
        step(1, { waits: { open: [wait('r1', 'q1'), wait('r1', 'q2')] } }),
      );
      expect((await t.store.listWaits('r1', { open: true })).map((w) => w.requestId)).toEqual([
        'q1',
        'q2',
      ]);
      await t.store.answerWait('r1', 'q2', '"yes"', 'ana', 2_100);
      await t.store.commit('r1', step(2, { waits: { close: ['q1', 'q2'] } }));
      expect(await t.store.listWaits('r1', { open: true })).toEqual([]);
      const [q1, q2] = await t.store.listWaits('r1');
      expect(q1?.closedAt).toBe(1_002);
      // An answered wait stays answered: closing is only for waits nobody answered.
      expect(q2).toMatchObject({ answer: '"yes"', closedAt: null });
      await rejectsWith(t.store.answerWait('r1', 'q1', '"late"', 'bob', 2_200), 'WAIT_CLOSED');
      expect((await t.store.listWaits('r1'))[0]?.answer).toBeNull();
    });

    it('a refused commit opens no wait and sets no timer: all of a step, or none of it', async () => {
      await t.store.createRun(newRun('r1'));
      await rejectsWith(
        t.store.commit(
          'r1',
          step(2, {
            waits: { open: [wait('r1', 'q1')] },
            timers: { set: [{ runId: 'r1', id: 'x', at: 1 }] },
          }),
        ),
        'STORE_CONFLICT',
      );
      expect(await t.store.listWaits('r1')).toEqual([]);
      expect(await t.store.listTimers('r1')).toEqual([]);
    });

    it('re-opening a wait a commit opened keeps the first record', async () => {
      await t.store.createRun(newRun('r1'));
      await t.store.commit('r1', step(1, { waits: { open: [wait('r1', 'q1', 2_000)] } }));
      await t.store.commit('r1', step(2, { waits: { open: [wait('r1', 'q1', 9_000)] } }));
      expect((await t.store.listWaits('r1')).map((w) => w.openedAt)).toEqual([2_000]);
    });
  });
}
