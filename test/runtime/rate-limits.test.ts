import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { errorValue } from '../../src/error/error-value.js';
import {
  END,
  graph,
  isWaymarkError,
  keepsRates,
  RATE_HOLD_MS,
  resume,
  run,
  type StreamEvent,
} from '../../src/index.js';
import { initialSnapshot } from '../../src/runtime/core/checkpoint.js';
import { step } from '../../src/runtime/core/step.js';
import { fakeClock } from '../support/clock.js';
import { stores } from '../support/stores.js';

// A node's `rateLimit` admits each attempt through the store before its body runs: an attempt
// over the resource's quota is not started; the run sleeps durably until the window has room
// (a timer row, nothing held), and then runs that same attempt.

const State = z.object({ n: z.number().default(0), tokens: z.number().default(0) });
// An admission holds its place in the window a minute and a quarter of a second (rates.ts).
const minute = RATE_HOLD_MS;

/** call -> END, counting bodies; each body reports `tokens` of usage. */
function limited(bodies: { call: number }, rateLimit: object, spend?: { maxTokens: number }) {
  return graph('limited', { state: State })
    .node(
      'call',
      (s, ctx) => {
        bodies.call++;
        if (s.tokens > 0) ctx.usage({ inputTokens: s.tokens, outputTokens: 0, model: 'm' });
        return { n: s.n + 1 };
      },
      { rateLimit: rateLimit as never, ...(spend && { spend }) },
    )
    .edge('call', END)
    .entry('call')
    .compile();
}

describe.each(stores)('a rate-limited node, with the %s store', (_name, makeStore) => {
  it('admits attempts up to requestsPerMinute; the next run sleeps until the window has room', async () => {
    const store = makeStore();
    const clock = fakeClock(1_000);
    const bodies = { call: 0 };
    const g = limited(bodies, { resource: 'api', requestsPerMinute: 2 });

    expect((await run(g, {}, { store, runId: 'a', clock })).status).toBe('succeeded');
    await clock.advance(10);
    expect((await run(g, {}, { store, runId: 'b', clock })).status).toBe('succeeded');
    await clock.advance(10);
    // holdSleepsMs: 0 leaves the sleep to whoever hosts the run (a worker, serve, a resume).
    const third = await run(g, {}, { store, runId: 'c', clock, holdSleepsMs: 0 });

    expect(bodies.call).toBe(2);
    expect(third.status).toBe('waiting');
    // Room comes when the first admission (at 1_000) leaves the window.
    expect(third.status === 'waiting' && third.wakesAt).toBe(1_000 + minute);
    expect(await store.listTimers('c')).toEqual([
      { runId: 'c', id: 'sleep:call:1', at: 1_000 + minute },
    ]);
    if (keepsRates(store))
      expect(await store.rateWindow('api', clock.now())).toMatchObject({ requests: 2 });

    // Before then, a resume finds it still sleeping and starts nothing.
    expect((await resume(store, g, 'c', { clock })).status).toBe('waiting');
    expect(bodies.call).toBe(2);

    await clock.advance(minute);
    const done = await resume(store, g, 'c', { clock });
    expect(done.status).toBe('succeeded');
    expect(bodies.call).toBe(3);
    // The deferral spent no attempt and recorded no error: attempt 1 is the one that ran.
    expect(third.trace.entries).toEqual([]);
    expect(done.trace.entries).toMatchObject([{ node: 'call', attempt: 1, status: 'succeeded' }]);
    expect(done.state.n).toBe(1);
  });

  it('in process, run() sleeps through the deferral on its clock and runs the attempt then', async () => {
    const store = makeStore();
    const clock = fakeClock(1_000);
    const bodies = { call: 0 };
    const g = limited(bodies, { resource: 'api', requestsPerMinute: 1 });
    await run(g, {}, { store, runId: 'a', clock });
    let ended = false;
    const second = run(g, {}, { store, runId: 'b', clock }).finally(() => {
      ended = true;
    });
    await clock.advance(minute - 1);
    expect(ended).toBe(false);
    expect(bodies.call).toBe(1);
    await clock.advance(1);
    expect((await second).status).toBe('succeeded');
    expect(bodies.call).toBe(2);
    expect(await store.listTimers('b')).toEqual([]);
  });

  it('tells a watcher the deferred attempt sleeps for its rate limit, naming the resource', async () => {
    const store = makeStore();
    const clock = fakeClock(1_000);
    const g = limited({ call: 0 }, { resource: 'api', requestsPerMinute: 1 });
    await run(g, {}, { store, runId: 'a', clock });
    const events: StreamEvent[] = [];
    await run(g, {}, { store, runId: 'b', clock, holdSleepsMs: 0, watch: (e) => events.push(e) });
    expect(events.filter((e) => e.type === 'activation.scheduled').at(-1)).toMatchObject({
      activation: 'call:1',
      attempt: 1,
      notBefore: 1_000 + minute,
      sleeping: true,
      rateLimited: 'api',
    });
  });

  it("a provider's 429 with Retry-After blocks the resource for every run until then", async () => {
    const store = makeStore();
    const clock = fakeClock(1_000);
    const Throttled = z.object({ refuse: z.boolean().default(false) });
    const g = graph('throttled', { state: Throttled })
      .node(
        'call',
        (s) => {
          if (s.refuse)
            throw Object.assign(new Error('Too Many Requests'), {
              status: 429,
              headers: { 'retry-after': '30' },
            });
          return {};
        },
        { rateLimit: { resource: 'api', requestsPerMinute: 100 } },
      )
      .edge('call', END)
      .entry('call')
      .compile();
    expect((await run(g, { refuse: true }, { store, runId: 'a', clock })).status).toBe('failed');
    const next = await run(g, {}, { store, runId: 'b', clock, holdSleepsMs: 0 });
    expect(next.status === 'waiting' && next.wakesAt).toBe(1_000 + 30_000);
    if (keepsRates(store))
      expect((await store.rateWindow('api', clock.now())).blockedUntil).toBe(31_000);
    await clock.advance(30_000);
    expect((await resume(store, g, 'b', { clock })).status).toBe('succeeded');
  });

  it('counts tokens from recorded usage, with maxTokens reserved until the attempt settles', async () => {
    const store = makeStore();
    const clock = fakeClock(1_000);
    const bodies = { call: 0 };
    const g = limited(bodies, { resource: 'llm', tokensPerMinute: 1_000 }, { maxTokens: 400 });

    await run(g, { tokens: 300 }, { store, runId: 'a', clock });
    await clock.advance(1);
    await run(g, { tokens: 500 }, { store, runId: 'b', clock });
    if (keepsRates(store))
      expect(await store.rateWindow('llm', clock.now())).toMatchObject({
        requests: 2,
        tokens: 800,
      });
    await clock.advance(1);
    // 800 used + 400 reserved > 1_000: no room until the 300 of the first leave the window.
    const third = await run(g, { tokens: 10 }, { store, runId: 'c', clock, holdSleepsMs: 0 });
    expect(third.status === 'waiting' && third.wakesAt).toBe(1_000 + minute);
    expect(bodies.call).toBe(2);
  });
});

describe('a recorded refusal', () => {
  it('is decided from the error, not the declaration: replayed after the limit was removed, it still defers', () => {
    // The quota is not the graph's shape: the graph without it has the same hash, so a run
    // recorded under the limit is replayed under the graph without it.
    const without = graph('limited', { state: State })
      .node('call', (s) => ({ n: s.n + 1 }))
      .edge('call', END)
      .entry('call')
      .compile();
    expect(without.hash).toBe(limited({ call: 0 }, { resource: 'api', requestsPerMinute: 1 }).hash);
    const first = step(
      without,
      initialSnapshot(without, 'r', { n: 0, tokens: 0 }, { maxSteps: 10 }),
      {
        type: 'started',
      },
    ).snapshot;
    const where = { node: 'call', activation: 'call:1', attempt: 1 };
    const error = errorValue(where, 'RATE_LIMITED', 'transient', 'full', {
      resource: 'api',
      until: 61_000,
    });
    const { snapshot, commands } = step(without, first, {
      type: 'failed',
      activation: 'call:1',
      attempt: 1,
      error,
      at: 1_000,
    });
    expect(snapshot.status).toBe('waiting');
    expect(snapshot.errors).toEqual([]);
    expect(snapshot.pending).toMatchObject([
      { id: 'call:1', attempt: 1, sleeping: { until: 61_000, rate: 'api' } },
    ]);
    expect(commands).toMatchObject([{ type: 'sleep' }]);
  });
});

describe('declaring rateLimit', () => {
  const declare = (rateLimit: unknown, spend?: { maxTokens: number }) => () =>
    graph('g', { state: State })
      .node('call', () => ({}), { rateLimit: rateLimit as never, ...(spend && { spend }) })
      .edge('call', END)
      .entry('call')
      .compile();

  it('refuses a rate limit without a resource or a quota, or one no attempt could pass', () => {
    for (const [bad, spend, says] of [
      [{ requestsPerMinute: 5 }, undefined, 'rateLimit.resource'],
      [{ resource: 'api' }, undefined, 'needs requestsPerMinute, tokensPerMinute or both'],
      [{ resource: 'api', requestsPerMinute: 0.5 }, undefined, 'rateLimit.requestsPerMinute'],
      [{ resource: 'api', tokensPerMinute: 100 }, { maxTokens: 500 }, "below the node's maxTokens"],
      ['openai', undefined, 'it must be an object'],
    ] as const) {
      try {
        declare(bad, spend)();
        expect.unreachable();
      } catch (error) {
        expect(isWaymarkError(error) && error.code).toBe('GRAPH_INVALID');
        expect(String((error as Error).message)).toContain(says);
      }
    }
  });

  it("is not part of the structural hash: a quota is not the graph's shape", () => {
    expect(declare({ resource: 'api', requestsPerMinute: 5 })().hash).toBe(
      declare({ resource: 'api', requestsPerMinute: 50 })().hash,
    );
  });
});
