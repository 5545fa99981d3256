import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { END, enqueue, graph, MemoryStore, run } from '../../src/index.js';
import type { Store } from '../../src/store/store.js';
import type { WorkQueue } from '../../src/store/work-queue.js';

const State = z.object({ n: z.number().default(0) });
const calls: string[] = [];
const spendy = (name: string) => (_s: unknown, ctx: { budget: unknown }) => {
  calls.push(name);
  seen.push(ctx.budget);
  return {};
};
const seen: unknown[] = [];

// Worst case: draft 3 visits x 2 attempts x 1,000 tokens, check 3 x 500: 7,500 tokens, $0.075.
const blog = graph('blog', { state: State })
  .node('draft', spendy('draft'), {
    kind: 'model',
    visits: 3,
    retry: { attempts: 2 },
    spend: { calls: 1, maxTokens: 1_000, maxCostUsd: 0.01 },
  })
  .node('check', spendy('check'), {
    kind: 'model',
    spend: { calls: 1, maxTokens: 500, maxCostUsd: 0.005 },
  })
  .edge('draft', 'check')
  .route('check', () => END, ['draft', END])
  .entry('draft')
  .compile();

describe('a run over its budget is refused before it spends', () => {
  it('maxTokens below the worst case: BOUND_OVER_BUDGET names the nodes, nothing runs or is recorded', async () => {
    const store = new MemoryStore();
    calls.length = 0;
    const refused = run(blog, {}, { store, maxTokens: 5_000 });
    await expect(refused).rejects.toMatchObject({
      code: 'BOUND_OVER_BUDGET',
      details: {
        over: [{ limit: 'maxTokens', max: 5_000, bound: 7_500 }],
        nodes: [
          { node: 'draft', tokens: 6_000 },
          { node: 'check', tokens: 1_500 },
        ],
      },
    });
    await expect(refused).rejects.toThrow(
      'graph "blog" can spend more than maxTokens 5000 (worst case 7,500); the nodes over it: draft 6,000 tokens, $0.06; check 1,500 tokens, $0.015',
    );
    expect(calls).toEqual([]);
    expect(await store.listRuns()).toEqual([]);
  });

  it('a cost budget is checked the same way, and enqueue refuses too', async () => {
    // The refusal comes before the queue is touched, so any store shows nothing was recorded.
    const store = new MemoryStore();
    await expect(
      enqueue(store as unknown as Store & WorkQueue, blog, {}, { maxCostUsd: 0.05 }),
    ).rejects.toMatchObject({
      code: 'BOUND_OVER_BUDGET',
      details: { over: [{ limit: 'maxCostUsd', max: 0.05 }] },
    });
    expect(await store.listRuns()).toEqual([]);
  });

  it('within the worst case the run goes ahead, with the promise as its running budget', async () => {
    seen.length = 0;
    const result = await run(blog, {}, { maxTokens: 7_500, maxCostUsd: 1 });
    expect(result.status).toBe('succeeded');
    expect(seen[0]).toEqual({ maxTokens: 7_500, maxCostUsd: 1 });
    // The tighter of the two when a running budget is given as well.
    seen.length = 0;
    await run(blog, {}, { maxTokens: 7_500, budget: { maxTokens: 2_000 } });
    expect(seen[0]).toEqual({ maxTokens: 2_000 });
  });

  it('a graph with no bound cannot promise anything: refused, with the reason', async () => {
    const open = graph('open', { state: State })
      .node('ask', () => ({}), { kind: 'model', spend: { calls: 2 } })
      .edge('ask', END)
      .entry('ask')
      .compile();
    await expect(run(open, {}, { maxTokens: 1_000_000 })).rejects.toMatchObject({
      code: 'BOUND_OVER_BUDGET',
      details: {
        over: [{ limit: 'maxTokens', bound: null }],
        nodes: [{ node: 'ask', reason: 'no maxTokens declared for its attempts' }],
      },
    });
    // Without a promise, the same graph runs as before (its running budget still applies).
    expect((await run(open, {}, { budget: { maxTokens: 10 } })).status).toBe('succeeded');
  });
});
