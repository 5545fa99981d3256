import { describe, expect, it } from 'vitest';
import { run } from '../../src/index.js';
import claims from './graph.js';

describe('the claims example', () => {
  it('loops back to plan once for the paraphrased statement, then publishes only verified citations', async () => {
    const result = await run(claims, {
      claim: 'Tea reached Europe before coffee was first recorded in Yemen',
    });

    expect(result.status).toBe('succeeded');
    expect(result.trace.path).toEqual([
      ...['plan', 'search', 'rank', 'write', 'verify'],
      ...['plan', 'search', 'rank', 'write', 'verify'],
      'publish',
    ]);
    expect(result.state.unverified).toEqual([]);
    expect(result.state.report).toContain('[tea-history]');
    expect(result.state.report).toContain('(all citations verified)');
    // The flaky first search is retried, not failed.
    const search = result.trace.entries.filter((e) => e.activation === 'search:1');
    expect(search.map((e) => e.status)).toEqual(['failed', 'succeeded']);
  });

  it('compiles to a plain-data graph whose every node is on the path from plan to END', () => {
    expect(claims.def.entry).toBe('plan');
    expect(claims.def.nodes.map((n) => n.name)).toEqual([
      'plan',
      'search',
      'rank',
      'write',
      'verify',
      'publish',
    ]);
    expect(claims.def.routes).toEqual([{ from: 'verify', targets: ['plan', 'publish'] }]);
  });
});
