import type { NewSchedule } from '../../store/schedule-store.js';
import type { Section } from './section.js';

// Schedules (ScheduleStore): the definition kept and replaced, and the one guarantee the
// runtime's ticks rest on, the compare-and-set of changeSchedule (docs/time.md#schedules).

const hourly: NewSchedule = {
  id: 'hourly',
  graph: 'report',
  cron: '0 * * * *',
  timezone: 'UTC',
  input: '{"topic":"sales"}',
  overlap: 'skip',
  catchUp: 'latest',
  nextAt: 3_600_000,
};

/** The state of a schedule as a tick leaves it. */
const ticked = (nextAt: number, lastTickAt: number) => ({
  nextAt,
  bufferedAt: null,
  lastTickAt,
  lastRunId: `sched:hourly:${lastTickAt}`,
  paused: false,
});

/** Schedules put, listed, changed under a revision, and removed. */
export function schedulesSuite(t: Section): void {
  const { describe, it, expect } = t;

  describe('schedules', () => {
    it('a schedule put is got back with its definition, unpaused, at revision 1', async () => {
      const put = await t.store.putSchedule(hourly);
      expect(put).toMatchObject({
        ...hourly,
        paused: false,
        bufferedAt: null,
        lastTickAt: null,
        lastRunId: null,
        revision: 1,
      });
      expect(await t.store.getSchedule('hourly')).toEqual(put);
      expect(await t.store.getSchedule('nope')).toBeUndefined();
    });

    it('putting a schedule again replaces its definition and keeps its last tick', async () => {
      const first = await t.store.putSchedule(hourly);
      await t.store.changeSchedule('hourly', first.revision, ticked(7_200_000, 3_600_000));
      const again = await t.store.putSchedule({ ...hourly, cron: '30 * * * *', nextAt: 5_400_000 });
      expect(again).toMatchObject({
        cron: '30 * * * *',
        nextAt: 5_400_000,
        lastTickAt: 3_600_000,
        lastRunId: 'sched:hourly:3600000',
        revision: 3,
      });
    });

    it('a change under the revision read lands once: a second one under the same revision is refused', async () => {
      const read = await t.store.putSchedule(hourly);
      const [a, b] = await Promise.all([
        t.store.changeSchedule('hourly', read.revision, ticked(7_200_000, 3_600_000)),
        t.store.changeSchedule('hourly', read.revision, ticked(7_200_000, 3_600_000)),
      ]);
      expect([a, b].filter((c) => c !== undefined)).toHaveLength(1);
      expect(await t.store.getSchedule('hourly')).toMatchObject({
        nextAt: 7_200_000,
        revision: read.revision + 1,
      });
      expect(await t.store.changeSchedule('gone', 1, ticked(7_200_000, 3_600_000))).toBeUndefined();
    });

    it('lists schedules by id, of all graphs or of some', async () => {
      await t.store.putSchedule({ ...hourly, id: 'b' });
      await t.store.putSchedule({ ...hourly, id: 'a', graph: 'other' });
      expect((await t.store.listSchedules()).map((s) => s.id)).toEqual(['a', 'b']);
      expect((await t.store.listSchedules(['report'])).map((s) => s.id)).toEqual(['b']);
      expect(await t.store.listSchedules(['none'])).toEqual([]);
    });

    it('due schedules are the unpaused ones of the graphs asked for whose tick is due, or with a buffered tick', async () => {
      await t.store.putSchedule({ ...hourly, id: 'due', nextAt: 1_000 });
      await t.store.putSchedule({ ...hourly, id: 'later', nextAt: 9_000 });
      await t.store.putSchedule({ ...hourly, id: 'done', nextAt: null });
      await t.store.putSchedule({ ...hourly, id: 'elsewhere', graph: 'other', nextAt: 500 });
      const paused = await t.store.putSchedule({ ...hourly, id: 'paused', nextAt: 500 });
      await t.store.changeSchedule('paused', paused.revision, { ...ticked(500, 0), paused: true });
      const held = await t.store.putSchedule({ ...hourly, id: 'held', nextAt: 9_000 });
      await t.store.changeSchedule('held', held.revision, { ...ticked(9_000, 0), bufferedAt: 800 });
      const due = await t.store.dueSchedules(['report'], 2_000);
      expect(due.map((s) => s.id)).toEqual(['held', 'due']);
      expect((await t.store.dueSchedules(['report'], 2_000, 1)).map((s) => s.id)).toEqual(['held']);
      expect(await t.store.dueSchedules([], 2_000)).toEqual([]);
    });

    it('the next schedule due after a time is the soonest unpaused one of those graphs', async () => {
      await t.store.putSchedule({ ...hourly, id: 'a', nextAt: 5_000 });
      await t.store.putSchedule({ ...hourly, id: 'b', nextAt: 3_000 });
      await t.store.putSchedule({ ...hourly, id: 'c', graph: 'other', nextAt: 2_000 });
      expect(await t.store.nextScheduleAt(['report'], 1_000)).toBe(3_000);
      expect(await t.store.nextScheduleAt(['report'], 3_000)).toBe(5_000);
      expect(await t.store.nextScheduleAt(['report'], 5_000)).toBeUndefined();
      expect(await t.store.nextScheduleAt(['other', 'report'], 0)).toBe(2_000);
    });

    it('a removed schedule is gone', async () => {
      await t.store.putSchedule(hourly);
      expect(await t.store.removeSchedule('hourly')).toBe(true);
      expect(await t.store.getSchedule('hourly')).toBeUndefined();
      expect(await t.store.removeSchedule('hourly')).toBe(false);
    });
  });
}
