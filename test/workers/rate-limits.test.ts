import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  END,
  enqueue,
  graph,
  MemoryStore,
  RATE_HOLD_MS,
  type Store,
  Worker,
  type WorkQueue,
} from '../../src/index.js';
import { SqliteStore } from '../../src/sqlite.js';
import { describePg, pgStoreForFile } from '../store/fixtures/postgres.js';
import { fakeClock } from '../support/clock.js';

// A node's rateLimit holds across every worker sharing the store: in any minute, at most
// requestsPerMinute attempts of the resource start, however many workers claim its runs. Time
// is a fake clock the workers share, so minutes pass in a moment.

const db = pgStoreForFile();
const minute = 60_000;
const State = z.object({ n: z.number().default(0) });

/** One rate-limited node, logging when each body starts (by the shared clock). */
function calling(starts: number[], clock: { now(): number }) {
  return graph('calls', { state: State })
    .node(
      'call',
      () => {
        starts.push(clock.now());
        return { n: 1 };
      },
      { rateLimit: { resource: 'api', requestsPerMinute: 3 } },
    )
    .edge('call', END)
    .entry('call')
    .compile();
}

/**
 * Eight runs of three a minute on `workers` workers, each on its own store (of one file, or one
 * memory), all on one fake clock that is the stores' clock too: every body once, and never more
 * than three starts in a minute.
 */
async function neverOverTheLimit(
  makeStores: (now: () => number) => readonly (Store & WorkQueue)[],
): Promise<void> {
  const clock = fakeClock(1_000_000);
  const stores = makeStores(() => clock.now());
  const starts: number[] = [];
  const g = calling(starts, clock);
  const ids: string[] = [];
  for (let i = 0; i < 8; i++) ids.push(await enqueue(stores[0]!, g, {}, { runId: `r${i}` }));
  const stop = new AbortController();
  const running = stores.map((store) =>
    new Worker(store, [g], { pollMs: 50, clock }).run(stop.signal),
  );
  try {
    const deadline = Date.now() + 20_000;
    for (;;) {
      const records = await Promise.all(ids.map((id) => stores[0]!.getRun(id)));
      if (records.every((r) => r?.status === 'succeeded')) break;
      if (Date.now() > deadline) throw new Error(`runs did not finish: ${starts.length} started`);
      await clock.advance(1_000);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  } finally {
    stop.abort();
    await Promise.all(running);
  }
  expect(starts).toHaveLength(8);
  const sorted = starts.toSorted((a, b) => a - b);
  for (let i = 3; i < sorted.length; i++)
    expect(sorted[i]! - sorted[i - 3]!).toBeGreaterThanOrEqual(minute);
  // Eight starts at three a minute take at least two minutes past the first.
  expect(sorted.at(-1)! - sorted[0]!).toBeGreaterThanOrEqual(2 * minute);
}

describe('rate limits with workers on the memory store', () => {
  it('two workers never start more than requestsPerMinute in a minute', async () => {
    await neverOverTheLimit((now) => {
      const store = new MemoryStore({ now });
      return [store, store];
    });
  });
});

describe('rate limits with workers on one SQLite file', () => {
  const dir = mkdtempSync(join(tmpdir(), 'waymark-rates-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  it('two workers, each with its own connection, never start more than requestsPerMinute', async () => {
    const path = join(dir, 'a.db');
    const opened: SqliteStore[] = [];
    try {
      await neverOverTheLimit((now) => {
        opened.push(new SqliteStore({ path, now }), new SqliteStore({ path, now }));
        return opened;
      });
    } finally {
      await Promise.all(opened.map((s) => s.close()));
    }
  });
});

describePg('rate limits with workers on PostgreSQL', () => {
  // PostgreSQL's own clock says when a timer is due, so the workers' clock starts 59 s in the
  // past: a deferral until a minute after the first admissions is due for the database in a
  // second of real time, when the test moves the workers' clock a minute on.
  it('three workers admit three a minute, and wake the deferred ones for the next minute', async () => {
    const t0 = Date.now() - 59_000;
    const clock = fakeClock(t0);
    const starts: number[] = [];
    const g = calling(starts, clock);
    const ids: string[] = [];
    for (let i = 0; i < 8; i++) ids.push(await enqueue(db.store, g, {}, { runId: `r${i}` }));
    const stop = new AbortController();
    const running = Array.from({ length: 3 }, () =>
      new Worker(db.store, [g], { pollMs: 50, clock }).run(stop.signal),
    );
    const statuses = async () =>
      (await Promise.all(ids.map((id) => db.store.getRun(id)))).map((r) => r?.status);
    const until = async (check: () => Promise<boolean>) => {
      const deadline = Date.now() + 15_000;
      while (!(await check())) {
        if (Date.now() > deadline) throw new Error(`stuck at ${starts.length} starts`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    };
    try {
      await until(async () => (await statuses()).filter((s) => s === 'waiting').length === 5);
      expect(starts).toEqual([t0, t0, t0]);
      for (const id of ids) {
        const timers = await db.store.listTimers(id);
        if (timers.length > 0)
          expect(timers).toEqual([{ runId: id, id: 'sleep:call:1', at: t0 + RATE_HOLD_MS }]);
      }
      await clock.advance(RATE_HOLD_MS);
      await until(async () => starts.length === 6);
      // Three more in the second minute, and not one over: the last two wait for the third.
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(starts).toHaveLength(6);
      expect((await statuses()).filter((s) => s === 'succeeded')).toHaveLength(6);
    } finally {
      stop.abort();
      await Promise.all(running);
    }
  });
});
