import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { append, END, graph, isWaymarkError, MemoryStore, resume, run } from '../../src/index.js';
import { SqliteStore } from '../../src/sqlite.js';

// Stopping without cancelling ("drain", LangGraph users ask for it by that name): a host that
// shuts down gives its runs back resumable, instead of waiting for them forever or cancelling
// them for good.

const State = z.object({ log: z.array(z.string()).default([]) });

function slowSecond(bodyMs: number) {
  const calls = { first: 0, second: 0, third: 0 };
  let started!: () => void;
  const secondStarted = new Promise<void>((resolve) => {
    started = resolve;
  });
  const g = graph('drained', { state: State, reducers: { log: append } })
    .node('first', () => {
      calls.first++;
      return { log: ['first'] };
    })
    .node('second', async (_s, ctx) => {
      calls.second++;
      started();
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(resolve, bodyMs);
        ctx.signal.addEventListener('abort', () => {
          clearTimeout(timer);
          reject(ctx.signal.reason);
        });
      });
      return { log: ['second'] };
    })
    .node('third', () => {
      calls.third++;
      return { log: ['third'] };
    })
    .edge('first', 'second')
    .edge('second', 'third')
    .edge('third', END)
    .entry('first')
    .compile();
  return { g, calls, secondStarted };
}

const stores = [
  ['memory', () => new MemoryStore()],
  ['sqlite', () => new SqliteStore({ path: ':memory:' })],
] as const;

describe.each(stores)('a run driven in process, drained (%s)', (_name, makeStore) => {
  it('lets the node running finish within the grace, records it, starts nothing new, and leaves the run resumable', async () => {
    const store = makeStore();
    const { g, calls, secondStarted } = slowSecond(100);
    const drain = new AbortController();
    const running = run(g, {}, { store, runId: 'r', drain: drain.signal, drainGraceMs: 5_000 });
    await secondStarted;
    drain.abort();

    const refused = await running.catch((e: unknown) => e);
    expect(isWaymarkError(refused) && refused.code).toBe('RUN_DRAINED');
    const record = await store.getRun('r');
    expect(record).toMatchObject({ status: 'running', lease: { live: false } });
    expect(calls).toEqual({ first: 1, second: 1, third: 0 });

    const resumed = await resume(store, g, 'r');
    expect(resumed.status).toBe('succeeded');
    expect(resumed.state.log).toEqual(['first', 'second', 'third']);
    expect(calls).toEqual({ first: 1, second: 1, third: 1 });
  });

  it('stops the node still running when the grace is over, records nothing of it, and a resume runs it again', async () => {
    const store = makeStore();
    const { g, calls, secondStarted } = slowSecond(60_000);
    const drain = new AbortController();
    const running = run(g, {}, { store, runId: 'r', drain: drain.signal, drainGraceMs: 50 });
    await secondStarted;
    drain.abort();

    const refused = await running.catch((e: unknown) => e);
    expect(isWaymarkError(refused) && refused.code).toBe('RUN_DRAINED');
    const failures = (await store.events('r')).filter((e) => e.event.includes('"failed"'));
    expect(failures).toEqual([]);

    const { g: again, calls: later } = slowSecond(1);
    const resumed = await resume(store, again, 'r');
    expect(resumed.status).toBe('succeeded');
    expect(calls).toEqual({ first: 1, second: 1, third: 0 });
    expect(later).toEqual({ first: 0, second: 1, third: 1 });
  });
});

describe('run options', () => {
  it('refuses a drain signal without a store: a run in memory has nowhere to be left', async () => {
    const { g } = slowSecond(1);
    const refused = await run(g, {}, { drain: new AbortController().signal }).catch((e) => e);
    expect(refused).toMatchObject({ code: 'OPTIONS_INVALID' });
  });
});
