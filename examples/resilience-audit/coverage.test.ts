import { describe, expect, it } from 'vitest';
import { MemoryStore, run } from '../../src/index.js';
import { graphCoverage } from '../../src/testing/index.js';
import audit from './graph.js';
import input from './input.json' with { type: 'json' };

describe('the resilience-audit example, covered', () => {
  it('declares no route or error edge, and its scenario merges both joins', async () => {
    const store = new MemoryStore();
    expect((await run(audit, input, { store })).status).toBe('succeeded');
    const coverage = graphCoverage(audit);

    await coverage.record(store);

    const { kinds, missed } = coverage.report();
    // Its every decision is a join over map branches: nothing to route, so 100% of none.
    expect([kinds.route, kinds.error]).toEqual([
      { covered: 0, total: 0, percent: 100 },
      { covered: 0, total: 0, percent: 100 },
    ]);
    expect(missed.map((i) => i.id)).toEqual(['join validate failed', 'join gate failed']);
  }, 60_000);
});
