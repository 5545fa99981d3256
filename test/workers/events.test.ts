import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  END,
  enqueue,
  event,
  graph,
  listSignals,
  MemoryStore,
  type Store,
  signal,
  type WorkQueue,
} from '../../src/index.js';
import { SqliteStore } from '../../src/sqlite.js';
import { describePg, pgStoreForFile } from '../store/fixtures/postgres.js';
import { untilStatus, withWorkers } from '../support/worker-runs.js';

// Workers host event waits: a signal to a waiting run writes its wait's answer and the run's
// inbox row in one transaction, so a worker's claim finds it (on PostgreSQL, told by NOTIFY);
// a signal sent early is kept, and the worker whose fold opens the wait takes it.

const db = pgStoreForFile();

const State = z.object({ orderId: z.string(), paidCents: z.number().default(0) });

/** paid (an event keyed by the order) -> ship, counting how often ship runs per order. */
function orders(shipped: Map<string, number>) {
  return graph('orders', { state: State })
    .node(
      'paid',
      event({
        name: 'payment',
        schema: z.object({ paidCents: z.number() }),
        key: (s: z.infer<typeof State>) => s.orderId,
      }),
    )
    .node('ship', (s) => {
      shipped.set(s.orderId, (shipped.get(s.orderId) ?? 0) + 1);
      return {};
    })
    .edge('paid', 'ship')
    .edge('ship', END)
    .entry('paid')
    .compile();
}

/**
 * Half the orders are signalled while their runs wait, half before their runs start; with a
 * poll of a minute, every run still goes on at once, and ships once.
 */
async function signalledOnce(store: Store & WorkQueue, workers: number, runs: number) {
  const shipped = new Map<string, number>();
  const g = orders(shipped);
  const early = Array.from({ length: runs / 2 }, (_, i) => `early${i}`);
  const late = Array.from({ length: runs / 2 }, (_, i) => `late${i}`);
  for (const id of early)
    await signal(store, { graph: g, key: id }, 'payment', { paidCents: 1 }, { id: `s-${id}` });
  await withWorkers(
    store,
    [g],
    workers,
    async () => {
      for (const id of [...early, ...late]) await enqueue(store, g, { orderId: id }, { runId: id });
      for (const id of late) expect(await untilStatus(store, id, ['waiting'])).toBe('waiting');
      await Promise.all(
        late.map((id) =>
          signal(store, id, 'payment', { paidCents: 2 }, { graph: g, id: `s-${id}` }),
        ),
      );
      // Sent again (a webhook's retry): a no-op.
      await signal(store, late[0]!, 'payment', { paidCents: 3 }, { graph: g, id: `s-${late[0]}` });
      for (const id of [...early, ...late])
        expect(await untilStatus(store, id, ['succeeded', 'failed'])).toBe('succeeded');
    },
    60_000,
  );
  for (const id of [...early, ...late]) expect(shipped.get(id)).toBe(1);
  expect(await listSignals(store, { state: 'kept' })).toEqual([]);
  expect(await listSignals(store, { state: 'consumed' })).toHaveLength(runs);
}

describePg('event waits on PostgreSQL workers', () => {
  it('two workers take each signal once, sent early or while the run waits, woken by NOTIFY', async () => {
    await signalledOnce(db.store, 2, 8);
  });
});

describe('event waits on a memory store worker', () => {
  it('a worker takes each signal once', async () => {
    await signalledOnce(new MemoryStore(), 1, 4);
  });
});

describe('event waits on SQLite workers (one file)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'waymark-events-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('two workers on one file take each signal once', async () => {
    const store = new SqliteStore({ path: join(dir, 'runs.sqlite') });
    try {
      await signalledOnce(store, 2, 6);
    } finally {
      store.close();
    }
  });
});
