// A node's cache (LangGraph.js: CachePolicy({ ttl }) and clearCache): an output reused across
// runs for a time to live, kept in the run's store and recorded as a reuse in the trace.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  clearCache,
  END,
  enqueue,
  graph,
  isWaymarkError,
  loadTrace,
  run,
} from '../../src/index.js';
import { describePg, pgStoreForFile } from '../store/fixtures/postgres.js';
import { manualClock } from '../support/clock.js';
import { stores } from '../support/stores.js';
import { workUntilSettled } from '../support/worker-runs.js';

const State = z.object({
  city: z.string(),
  forecast: z.string().default(''),
  said: z.string().default(''),
});

/** lookup (cached, counts its calls) -> say -> END. */
function weather(calls: { n: number }, cache: object = { ttlMs: 60_000 }) {
  return graph('weather', { state: State })
    .node(
      'lookup',
      (s) => {
        calls.n++;
        return { forecast: `sun in ${s.city} (${calls.n})` };
      },
      { reads: ['city'], cache: cache as { ttlMs: number } },
    )
    .node('say', (s) => ({ said: s.forecast }))
    .edge('lookup', 'say')
    .edge('say', END)
    .entry('lookup')
    .compile();
}

describe.each(stores)('a node cache on %s', (_, makeStore) => {
  it('a second run with the same inputs takes the cached output, recorded as a reuse; other inputs run', async () => {
    const calls = { n: 0 };
    const g = weather(calls);
    const store = makeStore();
    const clock = manualClock(1_000);

    const first = await run(g, { city: 'Oslo' }, { store, runId: 'a', clock });
    const second = await run(g, { city: 'Oslo' }, { store, runId: 'b', clock });
    const other = await run(g, { city: 'Lima' }, { store, runId: 'c', clock });

    expect(calls.n).toBe(2);
    expect(first.state.said).toBe('sun in Oslo (1)');
    expect(second.state.said).toBe('sun in Oslo (1)');
    expect(other.state.said).toBe('sun in Lima (2)');
    const trace = await loadTrace(store, 'b');
    expect(trace.entries.find((e) => e.node === 'lookup')).toMatchObject({ reused: true });
  });

  it('an output older than ttlMs is not taken: the node runs and caches again', async () => {
    const calls = { n: 0 };
    const g = weather(calls, { ttlMs: 500 });
    const store = makeStore();
    let now = 1_000;
    const clock = { now: () => now, sleep: async () => {} };
    await run(g, { city: 'Oslo' }, { store, runId: 'a', clock });
    now += 400;
    await run(g, { city: 'Oslo' }, { store, runId: 'b', clock });
    now += 700;
    const late = await run(g, { city: 'Oslo' }, { store, runId: 'c', clock });

    expect(calls.n).toBe(2);
    expect(late.state.said).toBe('sun in Oslo (2)');
  });

  it('clearCache forgets the outputs: the next run runs the node again', async () => {
    const calls = { n: 0 };
    const g = weather(calls);
    const store = makeStore();
    await run(g, { city: 'Oslo' }, { store, runId: 'a' });
    expect(await clearCache(store, g, 'lookup')).toBe(1);
    await run(g, { city: 'Oslo' }, { store, runId: 'b' });

    expect(calls.n).toBe(2);
    const refused = await clearCache(store, g, 'say').catch((e: unknown) => e);
    expect(isWaymarkError(refused) && refused.code).toBe('OPTIONS_INVALID');
    expect(String(refused)).toContain('its cached nodes: "lookup"');
  });

  it('a key function decides what counts as the same input', async () => {
    const calls = { n: 0 };
    const g = weather(calls, { ttlMs: 60_000, key: (s: { city: string }) => s.city.toLowerCase() });
    const store = makeStore();
    await run(g, { city: 'Oslo' }, { store, runId: 'a' });
    const again = await run(g, { city: 'OSLO' }, { store, runId: 'b' });

    expect(calls.n).toBe(1);
    expect(again.state.said).toBe('sun in Oslo (1)');
  });
});

describe('what a cache can be put on', () => {
  it('refuses a cache without reads or key, on an effect node, and a ttl that is not a number > 0', () => {
    const declare = (options: object, kind?: 'effect') =>
      graph('g', { state: State })
        .node('n', () => ({}), { ...options, ...(kind && { kind }) })
        .edge('n', END)
        .entry('n')
        .validate()
        .map((d) => [d.code, d.message]);

    expect(declare({ cache: { ttlMs: 10 } })[0]?.[1]).toContain('needs `reads`');
    expect(declare({ cache: { ttlMs: 10 }, reads: ['city'] }, 'effect')[0]?.[1]).toContain(
      'a effect node cannot be cached',
    );
    expect(declare({ cache: { ttlMs: 0 }, reads: ['city'] })[0]).toEqual([
      'OPTION_INVALID',
      expect.stringContaining('cache.ttlMs'),
    ]);
    expect(declare({ cache: { ttlMs: 10 }, reads: ['city'] })).toEqual([]);
  });

  it('a run without a store has no cache: the node runs every time', async () => {
    const calls = { n: 0 };
    const g = weather(calls);
    await run(g, { city: 'Oslo' });
    await run(g, { city: 'Oslo' });
    expect(calls.n).toBe(2);
  });
});

const db = pgStoreForFile();

describePg('a node cache through workers on PostgreSQL', () => {
  it('a worker caches an output; another run, in process or by a worker, takes it', async () => {
    const calls = { n: 0 };
    const g = weather(calls);
    const first = await enqueue(db.store, g, { city: 'Rome' });
    await workUntilSettled(db.store, [g], [first]);
    const second = await enqueue(db.store, g, { city: 'Rome' });
    await workUntilSettled(db.store, [g], [second]);
    const trace = await loadTrace(db.store, second);
    expect(trace.entries.find((e) => e.node === 'lookup')).toMatchObject({ reused: true });
    const inProcess = await run(g, { city: 'Rome' }, { store: db.store });
    expect(inProcess.state.said).toBe('sun in Rome (1)');
    expect(calls.n).toBe(1);
  });
});
