import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  answer,
  END,
  enqueue,
  graph,
  isWaymarkError,
  MemoryStore,
  person,
  type Store,
  sleep,
  type WorkQueue,
} from '../../src/index.js';
import { SqliteStore } from '../../src/sqlite.js';
import { describePg, pgStoreForFile } from '../store/fixtures/postgres.js';
import { untilStatus, withWorkers } from '../support/worker-runs.js';

// Workers wake sleeping runs: a sleep is a timer row, and a claim of runs takes a run whose timer
// is due (one indexed query for what is due, never a query per sleeping run). The run's lease
// and its fenced commit make the wake happen once however many workers look. A wait's deadline
// is a timer too: the worker that claims it closes the wait and the run routes on the timeout.

const db = pgStoreForFile();

const State = z.object({ n: z.number().default(0) });

/** first -> nap (300 ms of real time) -> last, counting how often last runs. */
function napping(ran: { last: number }) {
  return graph('nap', { state: State })
    .node('first', () => ({ n: 1 }))
    .node('nap', sleep({ for: '300ms' }))
    .node('last', (s) => {
      ran.last++;
      return { n: s.n + 1 };
    })
    .edge('first', 'nap')
    .edge('nap', 'last')
    .edge('last', END)
    .entry('first')
    .compile();
}

/** How many times the history records the wake of `activation` (its completion). */
async function wakes(store: Store, runId: string, activation: string): Promise<number> {
  const events = (await store.events(runId)).map(
    (e) => JSON.parse(e.event) as { type: string; activation?: string },
  );
  return events.filter((e) => e.type === 'completed' && e.activation === activation).length;
}

async function sleepsAndWakesOnce(store: Store & WorkQueue, workers: number, runs: number) {
  const ran = { last: 0 };
  const g = napping(ran);
  const ids = await Promise.all(
    Array.from({ length: runs }, (_, i) => enqueue(store, g, {}, { runId: `nap${i}` })),
  );
  await withWorkers(store, [g], workers, async () => {
    // Asleep first: waiting on its timer, no worker holding it.
    expect(await untilStatus(store, ids[0]!, ['waiting', 'succeeded'])).toBe('waiting');
    expect((await store.listTimers(ids[0]!)).map((t) => t.id)).toEqual(['sleep:nap:1']);
    for (const id of ids)
      expect(await untilStatus(store, id, ['succeeded', 'failed'])).toBe('succeeded');
  });
  expect(ran.last).toBe(runs);
  for (const id of ids) {
    expect(await wakes(store, id, 'nap:1')).toBe(1);
    expect(await store.listTimers(id)).toEqual([]);
  }
}

/**
 * An idle worker waits for the soonest timer, not for its next poll: with a poll of a minute,
 * a run asleep for 300 ms still wakes within a few seconds (it would wait the minute before).
 */
async function wakesWhenDueNotAtThePoll(store: Store & WorkQueue) {
  const ran = { last: 0 };
  const g = napping(ran);
  const runId = await enqueue(store, g, {}, { runId: 'due-soon' });
  await withWorkers(
    store,
    [g],
    1,
    async () => {
      const deadline = Date.now() + 10_000;
      while ((await store.getRun(runId))?.status !== 'succeeded') {
        if (Date.now() > deadline) throw new Error('the run did not wake when its timer was due');
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
    60_000,
  );
  expect(ran.last).toBe(1);
}

/** approve (a person with 300 ms to answer) -> done, or on its timeout -> escalate. */
function escalating(ran: { escalate: number }) {
  const Decision = z.object({
    approved: z.boolean().default(false),
    escalated: z.boolean().default(false),
  });
  return graph('escalating', { state: Decision })
    .node(
      'approve',
      person({ prompt: 'ok?', answer: z.object({ approved: z.boolean() }), timeoutMs: 300 }),
      { onError: 'escalate' },
    )
    .node(
      'escalate',
      () => {
        ran.escalate++;
        return { escalated: true };
      },
      { terminal: true },
    )
    .node('done', () => ({}), { terminal: true })
    .edge('approve', 'done')
    .entry('approve')
    .compile();
}

async function timesOutOnce(store: Store & WorkQueue, workers: number, runs: number) {
  const ran = { escalate: 0 };
  const g = escalating(ran);
  const ids = await Promise.all(
    Array.from({ length: runs }, (_, i) => enqueue(store, g, {}, { runId: `late${i}` })),
  );
  await withWorkers(store, [g], workers, async () => {
    for (const id of ids)
      expect(await untilStatus(store, id, ['succeeded', 'failed'])).toBe('succeeded');
  });
  expect(ran.escalate).toBe(runs);
  for (const id of ids) {
    const [wait] = await store.listWaits(id);
    expect(wait?.closedAt).not.toBeNull();
    expect(await store.listTimers(id)).toEqual([]);
    const late = await answer(store, id, wait!.requestId, { approved: true }, { by: 'late' }).catch(
      (e: unknown) => (isWaymarkError(e) ? e.code : e),
    );
    expect(late).toBe('WAIT_EXPIRED');
  }
}

describePg('sleeping runs on PostgreSQL workers', () => {
  it('two workers wake each sleeping run exactly once, when its timer is due', async () => {
    await sleepsAndWakesOnce(db.store, 2, 6);
  });

  it('two workers close a wait past its deadline once: the run escalates, a late answer is refused', async () => {
    await timesOutOnce(db.store, 2, 4);
  });

  it('an idle worker wakes a sleeping run when it is due, not at its next poll', async () => {
    await wakesWhenDueNotAtThePoll(db.store);
  });
});

describe('sleeping runs on a memory store worker', () => {
  it('an idle worker wakes a sleeping run when it is due, not at its next poll', async () => {
    await wakesWhenDueNotAtThePoll(new MemoryStore());
  });
});

describe('sleeping runs on SQLite workers (one file)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'waymark-sleep-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('two workers on one file wake each sleeping run exactly once', async () => {
    const store = new SqliteStore({ path: join(dir, 'runs.sqlite') });
    try {
      await sleepsAndWakesOnce(store, 2, 4);
      await timesOutOnce(store, 2, 3);
      await wakesWhenDueNotAtThePoll(store);
    } finally {
      store.close();
    }
  });
});
