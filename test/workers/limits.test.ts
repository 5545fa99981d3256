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
  MemoryStore,
  person,
  type Store,
  type WorkQueue,
} from '../../src/index.js';
import { SqliteStore } from '../../src/sqlite.js';
import type { LimitStore } from '../../src/store/limits.js';
import { describePg, pgStoreForFile } from '../store/fixtures/postgres.js';
import { untilStatus, withWorkers } from '../support/worker-runs.js';

// A graph's `limits` hold, across every worker, at most `concurrency` runs of one key running
// at once: the others are recorded `waiting`, queued in the store, and start in the order they
// were created as the running ones stop or wait.

const db = pgStoreForFile();

const State = z.object({ customer: z.string(), n: z.number().default(0) });

/** One node that holds its run running for a little real time, counting who runs at once. */
function limited(seen: { now: Map<string, number>; most: Map<string, number>; order: string[] }) {
  return graph('support', {
    state: State,
    limits: { key: (input) => input.customer, concurrency: 2 },
  })
    .node('work', async (s, ctx) => {
      seen.order.push(`${s.customer}:${ctx.runId}`);
      const now = (seen.now.get(s.customer) ?? 0) + 1;
      seen.now.set(s.customer, now);
      seen.most.set(s.customer, Math.max(seen.most.get(s.customer) ?? 0, now));
      await new Promise((resolve) => setTimeout(resolve, 40));
      seen.now.set(s.customer, seen.now.get(s.customer)! - 1);
      return { n: 1 };
    })
    .edge('work', END)
    .entry('work')
    .compile();
}

async function atMostConcurrencyPerKey(store: Store & WorkQueue & LimitStore, workers: number) {
  const seen = {
    now: new Map<string, number>(),
    most: new Map<string, number>(),
    order: [] as string[],
  };
  const g = limited(seen);
  const ids: string[] = [];
  for (let i = 0; i < 6; i++)
    ids.push(await enqueue(store, g, { customer: 'a' }, { runId: `a${i}` }));
  for (let i = 0; i < 2; i++)
    ids.push(await enqueue(store, g, { customer: 'b' }, { runId: `b${i}` }));
  // Before any worker: two of a's and both of b's hold a slot, a's other four are queued, in order.
  const queued = await store.listQueued({ graph: 'support' });
  expect(queued.map((q) => q.runId)).toEqual(['a2', 'a3', 'a4', 'a5']);
  expect(queued[0]).toMatchObject({ key: 'a', concurrency: 2, state: 'queued' });
  expect((await store.getRun('a2'))?.status).toBe('waiting');
  expect(await store.activeCount('support', 'a')).toBe(2);
  await withWorkers(
    store,
    [g],
    workers,
    async () => {
      for (const id of ids)
        expect(await untilStatus(store, id, ['succeeded', 'failed'])).toBe('succeeded');
    },
    30,
  );
  expect(seen.most.get('a')).toBe(2);
  expect(seen.most.get('b')).toBeLessThanOrEqual(2);
  // a's queued runs are handed slots in the order they were created: a4 and a5 only once a2 or
  // a3 stopped. Two handed slots together may start in either order, on two workers.
  const aOrder = seen.order.filter((o) => o.startsWith('a:')).map((o) => o.slice(2));
  expect(aOrder.slice(2, 4).sort()).toEqual(['a2', 'a3']);
  expect(aOrder.slice(4).sort()).toEqual(['a4', 'a5']);
  expect(await store.listQueued()).toEqual([]);
  expect(await store.activeCount('support', 'a')).toBe(0);
}

/** A run waiting for a person gives its slot to the next queued run, and takes one back on the answer. */
async function aWaitingRunFreesItsSlot(store: Store & WorkQueue & LimitStore) {
  const g = graph('approve', {
    state: State,
    limits: { key: (input) => input.customer, concurrency: 1 },
  })
    .node(
      'ask',
      person({ prompt: 'ok?', answer: z.object({ ok: z.boolean() }), update: () => ({ n: 1 }) }),
    )
    .edge('ask', END)
    .entry('ask')
    .compile();
  await enqueue(store, g, { customer: 'c' }, { runId: 'w1' });
  await enqueue(store, g, { customer: 'c' }, { runId: 'w2' });
  expect((await store.listQueued()).map((q) => q.runId)).toEqual(['w2']);
  await withWorkers(
    store,
    [g],
    2,
    async () => {
      // w1 waits for its person: w2 is handed the slot and starts, and waits too.
      expect(await untilStatus(store, 'w1', ['waiting'])).toBe('waiting');
      const deadline = Date.now() + 20_000;
      while (
        (await store.runLimit('w2'))?.state === 'queued' ||
        (await store.listWaits('w2', { open: true })).length === 0
      ) {
        if (Date.now() > deadline) throw new Error('w2 never started');
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      expect((await store.runLimit('w1'))?.state).toBe('idle');
      const [wait] = await store.listWaits('w1', { open: true });
      await answer(store, 'w1', wait!.requestId, { ok: true }, { by: 'test', graph: g });
      expect(await untilStatus(store, 'w1', ['succeeded'])).toBe('succeeded');
    },
    30,
  );
  expect((await store.runLimit('w1'))?.state).toBe('idle');
}

describe('concurrency limits per key with workers on the memory store', () => {
  it('never runs more than the limit of one key at once, and starts the queued in order', async () => {
    await atMostConcurrencyPerKey(new MemoryStore(), 3);
  });
  it('a run waiting for a person frees its slot', async () => {
    await aWaitingRunFreesItsSlot(new MemoryStore());
  });
});

describe('concurrency limits per key with workers on one SQLite file', () => {
  const dir = mkdtempSync(join(tmpdir(), 'waymark-limits-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  it('never runs more than the limit of one key at once, and starts the queued in order', async () => {
    const store = new SqliteStore(join(dir, 'a.db'));
    try {
      await atMostConcurrencyPerKey(store, 3);
    } finally {
      await store.close();
    }
  });
  it('a run waiting for a person frees its slot', async () => {
    const store = new SqliteStore(join(dir, 'b.db'));
    try {
      await aWaitingRunFreesItsSlot(store);
    } finally {
      await store.close();
    }
  });
});

describePg('concurrency limits per key with workers on PostgreSQL', () => {
  it('never runs more than the limit of one key at once, and starts the queued in order', async () => {
    await atMostConcurrencyPerKey(db.store, 3);
  });
  it('a run waiting for a person frees its slot', async () => {
    await aWaitingRunFreesItsSlot(db.store);
  });
});
