import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { END, enqueue, graph, MemoryStore, memoryOf, run, type Store } from '../../src/index.js';
import { SqliteStore } from '../../src/sqlite.js';
import type { WorkQueue } from '../../src/store/work-queue.js';
import { describePg, pgStoreForFile } from '../store/fixtures/postgres.js';
import { workUntilSettled } from '../support/worker-runs.js';

// ctx.memory in runs a worker hosts: the node body runs in the worker, reads and writes the
// store's items, and its writes are recorded in the run's ledger as in process.

const State = z.object({ user: z.string(), seen: z.array(z.string()).default([]) });

/** Counts, per store, the puts that reach it. */
const puts = new WeakMap<object, number>();

function countingPuts<S extends Store & WorkQueue>(store: S): S {
  return new Proxy(store, {
    get(target, key, receiver) {
      // The target as receiver: the stores' getters read their private fields.
      const value = Reflect.get(target, key, target);
      if (key === 'putItem') {
        return (...args: Parameters<Store['putItem']>) => {
          puts.set(receiver, (puts.get(receiver) ?? 0) + 1);
          return target.putItem(...args);
        };
      }
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

/** A node that remembers the user's visit, failing its first attempt after the put. */
const visit = graph('visit', { state: State, version: 1 })
  .node(
    'remember',
    async (s, ctx) => {
      const before = await ctx.memory.get<{ n: number }>(['users', s.user], 'visits');
      // Attempt 2 reads attempt 1's write (reads are not recorded) and asks for n + 1 again;
      // the put is recorded, so it writes nothing and returns what attempt 1 wrote.
      const put = await ctx.memory.put(['users', s.user], 'visits', {
        n: (before?.value.n ?? 0) + 1,
      });
      if (ctx.attempt === 1) throw new Error('the worker lost its network');
      return { seen: [`visit ${put.value.n}`] };
    },
    { retry: { attempts: 2, backoffMs: 1 } },
  )
  .edge('remember', END)
  .entry('remember')
  .compile();

/** Runs the visit graph on a worker for `user` and returns the run's state. */
async function visitOnWorker(store: Store & WorkQueue, user: string) {
  const runId = await enqueue(store, visit, { user });
  await workUntilSettled(store, [visit], [runId]);
  return (await store.getRun(runId))?.status;
}

async function holdsMemoryOnWorkers(store: Store & WorkQueue): Promise<void> {
  const counted = countingPuts(store);
  expect(await visitOnWorker(counted, 'u1')).toBe('succeeded');
  // The retried attempt found its put recorded: one write, and the visit counted once.
  expect(puts.get(counted)).toBe(1);
  expect(await memoryOf(store).get(['users', 'u1'], 'visits')).toMatchObject({ value: { n: 1 } });
  // A later run, hosted in process, reads what the worker-hosted one wrote.
  const later = await run(visit, { user: 'u1' }, { store });
  expect(later.state.seen).toEqual(['visit 2']);
}

describe('ctx.memory in a worker-hosted run', () => {
  it('on the memory store: read and written once, across runs', async () => {
    await holdsMemoryOnWorkers(new MemoryStore());
  });

  it('on a SQLite file (`waymark worker`): read and written once, across runs', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'waymark-memory-'));
    const store = new SqliteStore({ path: join(dir, 'waymark.db') });
    try {
      await holdsMemoryOnWorkers(store);
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describePg('ctx.memory in a worker-hosted run on PostgreSQL', () => {
  const db = pgStoreForFile();

  it('is read and written once, across runs', async () => {
    await holdsMemoryOnWorkers(db.store);
  });

  it('in process too: a retried attempt finds its put recorded', async () => {
    const first = await run(visit, { user: 'u2' }, { store: db.store });
    const second = await run(visit, { user: 'u2' }, { store: db.store });
    expect([first.state.seen, second.state.seen]).toEqual([['visit 1'], ['visit 2']]);
    expect(await memoryOf(db.store).get(['users', 'u2'], 'visits')).toMatchObject({
      value: { n: 2 },
    });
  });
});
