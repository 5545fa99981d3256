import { describe, expect, it } from 'vitest';
import { MemoryStore } from '../../src/index.js';
import { graphCoverage, pathCases } from '../../src/testing/index.js';
import claims from './graph.js';

// One case per path through the claims graph (docs/testing.md "Paths"): plan, search and
// verify failing for good into publish, verify's loop back to plan, and the way straight to
// publish. The node bodies return the script's outputs, so no model or search runs; verify's
// router is the graph's own, and decides on what the script gives it.
const script = {
  'route verify -> plan': { unverified: ['Tea reached Europe'] },
  'route verify -> publish': { unverified: [] },
};
const store = new MemoryStore();
const cases = pathCases(claims, script, { input: { claim: 'Tea came first' }, store });

describe('the claims graph, path by path', () => {
  it.each(cases)('$name', async (c) => {
    const outcome = await c.run();

    expect(outcome.message).toBeUndefined();
    expect(outcome.took).toEqual(c.path.nodes);
    expect(outcome.result.status).toBe('succeeded');
  });

  it('the cases take every declared route and error edge', async () => {
    const coverage = graphCoverage(claims);

    await coverage.record(store);

    const { kinds, missed } = coverage.report();
    expect(missed.filter((i) => i.kind === 'route' || i.kind === 'error')).toEqual([]);
    expect([kinds.route.percent, kinds.error.percent]).toEqual([100, 100]);
  });
});
