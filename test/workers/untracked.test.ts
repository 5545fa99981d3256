import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { append, END, enqueue, graph, inspect, Worker } from '../../src/index.js';
import { describePg, pgStoreForFile } from '../store/fixtures/postgres.js';
import { type RawStore, rawMemory, rawPostgres, rawSqlite } from '../support/raw-store.js';
import { until } from './fixtures/until.js';

// On workers every step is folded from the store, so a step hosted by a worker sees untracked
// fields at their defaults: what one node wrote to one never reaches the next, whether the next
// runs from a task on any worker or on the worker that holds the run (docs/workers.md).

const secret = 'MARKER-untracked-worker-41c9';
const State = z.object({
  seen: z.array(z.string()).default([]),
  connection: z.string().nullable().default(null),
});
const chain = graph('untracked-worker', {
  state: State,
  reducers: { seen: append },
  untracked: ['connection'],
})
  .node('open', () => ({ connection: secret }), { reads: [], writes: ['connection'] })
  .node('use', (s) => ({ seen: [s.connection === secret ? 'live' : 'default'] }), {
    reads: ['connection'],
    writes: ['seen'],
  })
  .edge('open', 'use')
  .edge('use', END)
  .entry('open')
  .compile();

const db = pgStoreForFile();
const opened: RawStore[] = [];
afterEach(async () => {
  for (const s of opened.splice(0)) await s.close();
});

function behaviour(open: () => RawStore) {
  it.each([
    ['from a task', false],
    ['on the worker holding the run', true],
  ])(
    'a worker-hosted step sees the default, %s, and the store never gets the value',
    async (_how, inline) => {
      const raw = open();
      opened.push(raw);
      const { store } = raw;
      const runId = await enqueue(store, chain, {});
      const stop = new AbortController();
      const working = new Worker(store, [chain], { pollMs: 20, leaseMs: 5_000, inline }).run(
        stop.signal,
      );
      try {
        await until(`run ${runId} stops`, async () => {
          const record = await store.getRun(runId);
          return record !== undefined && record.status !== 'running' ? record : undefined;
        });
      } finally {
        stop.abort();
        await working;
      }

      const view = await inspect(store, chain, runId);
      expect(view.snapshot.status).toBe('succeeded');
      expect(view.snapshot.state.seen).toEqual(['default']);
      expect(await raw.raw()).not.toContain(secret);
    },
  );
}

describe.each([
  ['memory', rawMemory],
  ['sqlite', rawSqlite],
] as const)('untracked fields on workers, %s store', (_name, open) => {
  behaviour(open);
});

describePg('untracked fields on workers, postgres store', () => {
  behaviour(() => rawPostgres(db));
});
