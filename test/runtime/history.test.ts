import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { append, END, graph, history, inspect, isWaymarkError, run } from '../../src/index.js';
import { stores } from '../support/stores.js';

// history(): the state after every step, computed from the snapshots and events (nothing per
// step is stored), a page at a time.

const loop = graph('history-loop', {
  state: z.object({ n: z.number().default(0), log: z.array(z.string()).default([]) }),
  reducers: { log: append },
})
  .node('tick', (s) => ({ n: s.n + 1, log: [`tick ${s.n}`] }), { visits: 250 })
  .route('tick', (s) => (s.n < 250 ? 'tick' : END), ['tick', END])
  .entry('tick')
  .compile();

const codeOf = (p: Promise<unknown>) =>
  p.then(
    () => 'resolved',
    (e: unknown) => (isWaymarkError(e) ? e.code : String(e)),
  );

describe.each(stores)('history, with the %s store', (_name, makeStore) => {
  it('gives the state after every step, from the input (seq 0) to the end, whatever snapshots the store kept', async () => {
    const store = makeStore();
    const live: unknown[] = [];
    await run(
      loop,
      {},
      {
        store,
        runId: 'r1',
        snapshotEvery: 40,
        watchStates: true,
        watch: (e) => e.type === 'activation.completed' && live.push(e.state),
      },
    );
    const { steps, next } = await history(store, loop, 'r1', { limit: 1_000 });
    expect(next).toBeUndefined();
    expect(steps[0]).toMatchObject({ seq: 0, event: 'created', state: { n: 0, log: [] } });
    expect(steps.filter((s) => s.event === 'completed').map((s) => s.state)).toEqual(live);
    expect(steps.at(-1)).toMatchObject({ status: 'succeeded' });
    expect(steps.at(-1)!.state).toEqual((await inspect(store, loop, 'r1')).snapshot.state);
    expect(steps.map((s) => s.seq)).toEqual(steps.map((_, i) => i));
  });

  it('pages: each page starts after the one before, and together they are the whole history', async () => {
    const store = makeStore();
    await run(loop, {}, { store, runId: 'r1', snapshotEvery: 40 });
    const whole = (await history(store, loop, 'r1', { limit: 1_000 })).steps;
    const paged = [];
    let after: number | undefined;
    for (;;) {
      const page = await history(store, loop, 'r1', {
        limit: 37,
        ...(after !== undefined && { after }),
      });
      paged.push(...page.steps);
      if (page.next === undefined) break;
      expect(page.steps).toHaveLength(37);
      after = page.next;
    }
    expect(paged).toEqual(whole);
    expect((await history(store, loop, 'r1', { after: whole.at(-1)!.seq })).steps).toEqual([]);
  });

  it('refuses a page it cannot give, with its code', async () => {
    const store = makeStore();
    await run(loop, {}, { store, runId: 'r1' });
    expect(await codeOf(history(store, loop, 'r1', { limit: 0 }))).toBe('OPTIONS_INVALID');
    expect(await codeOf(history(store, loop, 'r1', { after: 1.5 }))).toBe('OPTIONS_INVALID');
    expect(await codeOf(history(store, loop, 'nope'))).toBe('RUN_NOT_FOUND');
  });
});
