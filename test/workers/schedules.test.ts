import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  END,
  getSchedule,
  graph,
  MemoryStore,
  type Store,
  schedule,
  Worker,
  type WorkQueue,
} from '../../src/index.js';
import { SqliteStore } from '../../src/sqlite.js';
import { describePg, pgStoreForFile } from '../store/fixtures/postgres.js';
import { fakeClock } from '../support/clock.js';

// Workers tick the schedules of the graphs they run: each due tick starts one run however many
// workers look (the run is named by its tick, and the tick is taken by a compare-and-set of the
// schedule's row). Time is a fake clock the workers share: hours pass in a moment, and every
// worker wakes at the same instant for the same tick, which is the race under test.

const db = pgStoreForFile();

const hour = 3_600_000;
const t0 = Date.parse('2026-03-02T00:00:00Z');

/** report: one node, counting how often it runs. */
function reporting(ran: { write: number }) {
  return graph('report', { state: z.object({ team: z.string() }) })
    .node('write', () => {
      ran.write++;
      return {};
    })
    .edge('write', END)
    .entry('write')
    .compile();
}

/** Waits (for real, briefly) until `check` holds, moving the shared clock a second at a time. */
async function until(clock: ReturnType<typeof fakeClock>, check: () => Promise<boolean>) {
  const deadline = Date.now() + 15_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('the workers did not get there');
    await clock.advance(1_000);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/**
 * `workers` workers, an hourly schedule, three hours: three runs, one per tick, each run once.
 * The schedule poll is a day: a worker wakes for a tick because it is due, not at a poll.
 */
async function oneRunPerTick(store: Store & WorkQueue, workers: number): Promise<void> {
  const ran = { write: 0 };
  const g = reporting(ran);
  const clock = fakeClock(t0);
  await schedule(store, g, {
    id: 'hourly',
    cron: '0 * * * *',
    input: { team: 'sales' },
    overlap: 'allow',
    catchUp: 'all',
    clock,
  });
  const stop = new AbortController();
  const running = Array.from({ length: workers }, () =>
    new Worker(store, [g], { pollMs: 50, schedulePollMs: 24 * hour, clock }).run(stop.signal),
  );
  try {
    for (let h = 1; h <= 3; h++) await clock.advance(hour);
    await until(clock, async () => (await getSchedule(store, 'hourly')).nextAt === t0 + 4 * hour);
    await until(clock, async () => {
      const runs = await store.listRuns({ graph: 'report' });
      return runs.length >= 3 && runs.every((r) => r.status === 'succeeded');
    });
  } finally {
    stop.abort();
    await Promise.all(running);
  }
  const runs = await store.listRuns({ graph: 'report' });
  expect(runs.map((r) => r.id).sort()).toEqual([
    'sched:hourly:2026-03-02T01:00:00.000Z',
    'sched:hourly:2026-03-02T02:00:00.000Z',
    'sched:hourly:2026-03-02T03:00:00.000Z',
  ]);
  expect(ran.write).toBe(3);
  expect(await getSchedule(store, 'hourly')).toMatchObject({
    lastTickAt: t0 + 3 * hour,
    lastRunId: 'sched:hourly:2026-03-02T03:00:00.000Z',
  });
}

describe('schedules on memory store workers', () => {
  it('one worker starts one run per tick, woken by the tick and not by a poll', async () => {
    await oneRunPerTick(new MemoryStore(), 1);
  });

  it('two workers start one run per tick', async () => {
    await oneRunPerTick(new MemoryStore(), 2);
  });
});

describe('schedules on SQLite workers (one file)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'waymark-schedules-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('two workers, each with its own connection to the file, start one run per tick', async () => {
    const path = join(dir, 'runs.sqlite');
    const first = new SqliteStore(path);
    const second = new SqliteStore(path);
    try {
      const ran = { write: 0 };
      const g = reporting(ran);
      const clock = fakeClock(t0);
      await schedule(first, g, {
        id: 'hourly',
        cron: '0 * * * *',
        input: { team: 'ops' },
        overlap: 'allow',
        catchUp: 'all',
        clock,
      });
      const stop = new AbortController();
      const running = [first, second].map((store) =>
        new Worker(store, [g], { pollMs: 50, schedulePollMs: 24 * hour, clock }).run(stop.signal),
      );
      try {
        for (let h = 1; h <= 3; h++) await clock.advance(hour);
        await until(clock, async () => {
          const runs = await first.listRuns({ graph: 'report' });
          return runs.length >= 3 && runs.every((r) => r.status === 'succeeded');
        });
      } finally {
        stop.abort();
        await Promise.all(running);
      }
      expect((await first.listRuns({ graph: 'report' })).map((r) => r.id).sort()).toEqual([
        'sched:hourly:2026-03-02T01:00:00.000Z',
        'sched:hourly:2026-03-02T02:00:00.000Z',
        'sched:hourly:2026-03-02T03:00:00.000Z',
      ]);
      expect(ran.write).toBe(3);
    } finally {
      await first.close();
      await second.close();
    }
  });
});

describePg('schedules on PostgreSQL workers', () => {
  it('two workers start one run per tick', async () => {
    await oneRunPerTick(db.store, 2);
  });
});
