import { tool } from 'ai';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { END, graph, MemoryStore, RATE_HOLD_MS, run } from '../../src/index.js';
import { agent, scriptedModel } from '../../src/model/index.js';
import { SqliteStore } from '../../src/sqlite.js';
import { fakeClock } from '../support/clock.js';

// An agent's turns are provider calls: under a rate limit each is a request of its own. The
// attempt's admission covers the first; a later turn the window has no room for waits inside
// the attempt, on the run's clock, until it has.

const State = z.object({ answer: z.string().default('') });
const Answer = z.object({ answer: z.string() });
const usage = { inputTokens: 10, outputTokens: 5 };
const look = tool({
  description: 'Looks something up.',
  inputSchema: z.object({ q: z.string() }),
  execute: async () => ({ found: 'it' }),
});

/** An agent that calls a tool, then answers: two provider calls in one attempt. */
function twoTurns(requestsPerMinute: number) {
  const m = scriptedModel([
    { toolCalls: [{ toolName: 'look', input: { q: 'x' } }], usage },
    { object: { answer: 'done' }, usage },
  ]);
  const g = graph('agent', { state: State })
    .node(
      'ask',
      agent({
        model: m,
        prompt: () => 'find it',
        tools: { look },
        output: Answer,
        maxTurns: 3,
        rateLimit: { resource: 'llm', requestsPerMinute },
      }),
      { writes: ['answer'] },
    )
    .edge('ask', END)
    .entry('ask')
    .compile();
  return { g, m };
}

describe.each([
  ['memory', () => new MemoryStore()],
  ['sqlite', () => new SqliteStore({ path: ':memory:' })],
])('a rate-limited agent, with the %s store', (_name, makeStore) => {
  it('counts each turn as a request: two turns fill a window of two', async () => {
    const store = makeStore();
    const clock = fakeClock(1_000);
    const { g } = twoTurns(2);
    expect((await run(g, {}, { store, runId: 'a', clock })).status).toBe('succeeded');
    expect(await store.rateWindow('llm', clock.now())).toMatchObject({ requests: 2, tokens: 30 });
    const next = await run(g, {}, { store, runId: 'b', clock, holdSleepsMs: 0 });
    expect(next.status === 'waiting' && next.wakesAt).toBe(1_000 + RATE_HOLD_MS);
  });

  it('a turn over the limit waits inside the attempt until the window has room', async () => {
    const store = makeStore();
    const clock = fakeClock(1_000);
    const { g, m } = twoTurns(1);
    let ended = false;
    const running = run(g, {}, { store, runId: 'a', clock }).finally(() => {
      ended = true;
    });
    for (let i = 0; i < 20 && m.requests.length < 1; i++)
      await new Promise((resolve) => setImmediate(resolve));
    expect(m.requests).toHaveLength(1);
    await clock.advance(RATE_HOLD_MS - 1);
    expect(ended).toBe(false);
    expect(m.requests).toHaveLength(1);
    await clock.advance(1);
    const result = await running;
    expect(result.status).toBe('succeeded');
    expect(result.state.answer).toBe('done');
    expect(m.requests).toHaveLength(2);
  });
});
