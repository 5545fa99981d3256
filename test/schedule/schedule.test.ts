import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  type CompiledGraph,
  END,
  enqueue,
  getSchedule,
  graph,
  isWaymarkError,
  listSchedules,
  MemoryStore,
  pauseSchedule,
  removeSchedule,
  resumeSchedule,
  schedule,
  tickRunId,
} from '../../src/index.js';
import { tickDue, tickSchedule } from '../../src/runtime/schedule/tick.js';
import { sampleCommit } from '../../src/testing/index.js';

// Schedules through the library: stored definitions, and what a host's tick starts. A tick is
// driven here with a time the test sets, and runs are recorded as a worker host records them
// (enqueue), so what each tick started is read back from the store.

const report = graph('report', {
  state: z.object({ team: z.string(), done: z.boolean().default(false) }),
  input: z.object({ team: z.string() }),
})
  .node('write', () => ({ done: true }))
  .edge('write', END)
  .entry('write')
  .compile();

const hour = 3_600_000;
const t0 = Date.parse('2026-03-02T00:00:00Z');

/** A host of `report` on `store` whose time is `at.now`. */
function host(store: MemoryStore, at: { now: number }) {
  const started: string[] = [];
  return {
    started,
    store,
    graphs: new Map<string, CompiledGraph>([['report', report as CompiledGraph]]),
    now: () => at.now,
    start: async (g: CompiledGraph, input: unknown, runId: string) => {
      started.push(runId);
      await enqueue(store, g, input, { runId }).catch((e: unknown) => {
        if (!isWaymarkError(e) || e.code !== 'RUN_EXISTS') throw e;
      });
    },
  };
}

const clockAt = (at: { now: number }) => ({ now: () => at.now, sleep: async () => {} });

async function codeOf(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => 'resolved',
    (e: unknown) => (isWaymarkError(e) ? e.code : e),
  );
}

/** The ids of the store's runs, oldest first. */
async function runIds(store: MemoryStore): Promise<string[]> {
  return (await store.listRuns()).map((r) => r.id).sort();
}

/** Ends the run as succeeded, as its driver would. */
async function finish(store: MemoryStore, runId: string): Promise<void> {
  await store.commit(runId, sampleCommit(1, { status: 'succeeded' }));
}

describe('schedule()', () => {
  it('stores the schedule with its first tick after now, skip and latest by default, in UTC', async () => {
    const store = new MemoryStore();
    const s = await schedule(store, report, {
      id: 'hourly',
      cron: '0 * * * *',
      input: { team: 'sales' },
      clock: clockAt({ now: t0 + 10 }),
    });
    expect(s).toMatchObject({
      id: 'hourly',
      graph: 'report',
      timezone: 'UTC',
      input: { team: 'sales' },
      overlap: 'skip',
      catchUp: 'latest',
      paused: false,
      nextAt: t0 + hour,
    });
    expect(await getSchedule(store, 'hourly')).toEqual(s);
    expect((await listSchedules(store, { graph: 'report' })).map((x) => x.id)).toEqual(['hourly']);
  });

  it('reads the cron expression in its time zone, across a change to summer time', async () => {
    const store = new MemoryStore();
    // Berlin moves to summer time on 2026-03-29: 9:00 there is 8:00 UTC before, 7:00 after.
    const s = await schedule(store, report, {
      cron: '0 9 * * *',
      timezone: 'Europe/Berlin',
      input: { team: 'a' },
      clock: clockAt({ now: Date.parse('2026-03-28T12:00:00Z') }),
    });
    expect(new Date(s.nextAt!).toISOString()).toBe('2026-03-29T07:00:00.000Z');
    const at = { now: s.nextAt! };
    await tickDue(host(store, at));
    expect(new Date((await getSchedule(store, s.id)).nextAt!).toISOString()).toBe(
      '2026-03-30T07:00:00.000Z',
    );
  });

  it('declaring the same schedule again is the same schedule: its id comes from what it is', async () => {
    const store = new MemoryStore();
    const options = { cron: '0 * * * *', input: { team: 'sales' }, clock: clockAt({ now: t0 }) };
    const first = await schedule(store, report, options);
    const again = await schedule(store, report, {
      ...options,
      clock: clockAt({ now: t0 + 5 * hour }),
    });
    expect(again).toEqual(first);
    expect(first.id).toMatch(/^report:[0-9a-f]{8}$/);
    const other = await schedule(store, report, { ...options, input: { team: 'ops' } });
    expect(other.id).not.toBe(first.id);
  });

  it('refuses a bad cron expression, time zone, input or policy with SCHEDULE_INVALID', async () => {
    const store = new MemoryStore();
    const base = { cron: '0 * * * *', input: { team: 'a' } };
    expect(await codeOf(schedule(store, report, { ...base, cron: 'every hour' }))).toBe(
      'SCHEDULE_INVALID',
    );
    expect(await codeOf(schedule(store, report, { ...base, timezone: 'Mars/Olympus' }))).toBe(
      'SCHEDULE_INVALID',
    );
    expect(await codeOf(schedule(store, report, { ...base, input: { team: 3 } as never }))).toBe(
      'SCHEDULE_INVALID',
    );
    expect(await codeOf(schedule(store, report, { ...base, overlap: 'queue' as never }))).toBe(
      'SCHEDULE_INVALID',
    );
    expect(await store.listSchedules()).toEqual([]);
  });

  it('an unknown id is SCHEDULE_NOT_FOUND to get, pause, resume and remove', async () => {
    const store = new MemoryStore();
    for (const call of [getSchedule, pauseSchedule, resumeSchedule, removeSchedule])
      expect(await codeOf(call(store, 'nope'))).toBe('SCHEDULE_NOT_FOUND');
  });
});

describe('ticks', () => {
  async function hourly(store: MemoryStore, options: Partial<Parameters<typeof schedule>[2]> = {}) {
    return schedule(store, report, {
      id: 'h',
      cron: '0 * * * *',
      input: { team: 'sales' },
      clock: clockAt({ now: t0 }),
      ...options,
    });
  }

  it('a due tick starts one run, named by the schedule and the tick, and the next tick is an hour on', async () => {
    const store = new MemoryStore();
    await hourly(store);
    const at = { now: t0 + hour + 20 };
    await tickDue(host(store, at));
    await tickDue(host(store, at));
    expect(await runIds(store)).toEqual(['sched:h:2026-03-02T01:00:00.000Z']);
    expect(tickRunId('h', t0 + hour)).toBe('sched:h:2026-03-02T01:00:00.000Z');
    expect(await getSchedule(store, 'h')).toMatchObject({
      nextAt: t0 + 2 * hour,
      lastTickAt: t0 + hour,
      lastRunId: 'sched:h:2026-03-02T01:00:00.000Z',
    });
    const loaded = await store.loadRun('sched:h:2026-03-02T01:00:00.000Z');
    expect(JSON.parse(loaded!.snapshot.data).state).toMatchObject({ team: 'sales' });
  });

  it('two hosts that read the same tick start one run: the second finds the run, and the row moved on', async () => {
    const store = new MemoryStore();
    const s = await store.getSchedule((await hourly(store)).id);
    const at = { now: t0 + hour };
    const a = host(store, at);
    const b = host(store, at);
    await Promise.all([tickSchedule(a, s!), tickSchedule(b, s!)]);
    expect(await runIds(store)).toEqual(['sched:h:2026-03-02T01:00:00.000Z']);
    expect((await getSchedule(store, 'h')).revision).toBe(s!.revision + 1);
  });

  it('a host killed after starting a tick’s run but before taking the tick: the next one takes it, no second run', async () => {
    const store = new MemoryStore();
    await hourly(store);
    const at = { now: t0 + hour };
    const h = host(store, at);
    // What the killed host did: the run exists, the tick is still due.
    await h.start(report as CompiledGraph, { team: 'sales' }, tickRunId('h', t0 + hour));
    await tickDue(h);
    expect(await runIds(store)).toEqual(['sched:h:2026-03-02T01:00:00.000Z']);
    expect(await getSchedule(store, 'h')).toMatchObject({
      nextAt: t0 + 2 * hour,
      lastRunId: 'sched:h:2026-03-02T01:00:00.000Z',
    });
  });

  it('overlap skip: a tick while the previous run is live starts nothing', async () => {
    const store = new MemoryStore();
    await hourly(store);
    const at = { now: t0 + hour };
    await tickDue(host(store, at));
    at.now = t0 + 2 * hour;
    await tickDue(host(store, at));
    expect(await runIds(store)).toEqual(['sched:h:2026-03-02T01:00:00.000Z']);
    expect(await getSchedule(store, 'h')).toMatchObject({
      nextAt: t0 + 3 * hour,
      lastTickAt: t0 + 2 * hour,
    });
  });

  it('overlap buffer-one: one tick is kept while the previous run is live, and starts when it ends', async () => {
    const store = new MemoryStore();
    await hourly(store, { overlap: 'buffer-one' });
    const at = { now: t0 + hour };
    await tickDue(host(store, at));
    for (const n of [2, 3]) {
      at.now = t0 + n * hour;
      await tickDue(host(store, at));
    }
    expect(await runIds(store)).toHaveLength(1);
    expect((await getSchedule(store, 'h')).bufferedAt).toBe(t0 + 2 * hour);
    await finish(store, 'sched:h:2026-03-02T01:00:00.000Z');
    at.now += 60_000;
    await tickDue(host(store, at));
    expect(await runIds(store)).toEqual([
      'sched:h:2026-03-02T01:00:00.000Z',
      'sched:h:2026-03-02T02:00:00.000Z',
    ]);
    expect(await getSchedule(store, 'h')).toMatchObject({
      bufferedAt: null,
      lastRunId: 'sched:h:2026-03-02T02:00:00.000Z',
    });
  });

  it('overlap allow: every tick starts a run, live or not', async () => {
    const store = new MemoryStore();
    await hourly(store, { overlap: 'allow' });
    const at = { now: t0 + hour };
    await tickDue(host(store, at));
    at.now = t0 + 2 * hour;
    await tickDue(host(store, at));
    expect(await runIds(store)).toHaveLength(2);
  });

  describe('catch-up after three hours with no host (ticks at 1:00, 2:00, 3:00 due at 3:10)', () => {
    const back = t0 + 3 * hour + 10 * 60_000;
    const ticksAfter = async (catchUp: 'none' | 'latest' | 'all') => {
      const store = new MemoryStore();
      await hourly(store, { catchUp, overlap: 'allow' });
      await tickDue(host(store, { now: back }));
      expect((await getSchedule(store, 'h')).nextAt).toBe(t0 + 4 * hour);
      return runIds(store);
    };

    it('latest starts the last tick only', async () => {
      expect(await ticksAfter('latest')).toEqual(['sched:h:2026-03-02T03:00:00.000Z']);
    });

    it('all starts each missed tick, oldest first', async () => {
      expect(await ticksAfter('all')).toEqual([
        'sched:h:2026-03-02T01:00:00.000Z',
        'sched:h:2026-03-02T02:00:00.000Z',
        'sched:h:2026-03-02T03:00:00.000Z',
      ]);
    });

    it('none starts none of them: a tick found more than a minute late is missed', async () => {
      expect(await ticksAfter('none')).toEqual([]);
    });

    it('none still starts a tick found within a minute of it', async () => {
      const store = new MemoryStore();
      await hourly(store, { catchUp: 'none' });
      await tickDue(host(store, { now: t0 + hour + 30_000 }));
      expect(await runIds(store)).toEqual(['sched:h:2026-03-02T01:00:00.000Z']);
    });
  });

  it('a paused schedule starts nothing; resumed, it goes on from now without the ticks it was paused for', async () => {
    const store = new MemoryStore();
    await hourly(store);
    expect((await pauseSchedule(store, 'h')).paused).toBe(true);
    await tickDue(host(store, { now: t0 + 3 * hour }));
    expect(await runIds(store)).toEqual([]);
    const resumed = await resumeSchedule(store, 'h', {
      clock: clockAt({ now: t0 + 3 * hour + 60_000 }),
    });
    expect(resumed).toMatchObject({ paused: false, nextAt: t0 + 4 * hour });
    await removeSchedule(store, 'h');
    expect(await listSchedules(store)).toEqual([]);
  });
});
