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

  it('routes an error to publish: a claim no source mentions leaves verify nothing to check', async () => {
    const result = await run(claims, { claim: 'Zebras invented jazz' });

    expect(result.status).toBe('succeeded');
    expect(result.trace.path).toEqual(['plan', 'search', 'rank', 'write', 'verify', 'publish']);
    expect(result.errors).toMatchObject([
      {
        node: 'verify',
        code: 'NODE_FAILED',
        class: 'permanent',
        message: 'nothing to verify: the search found no source for the claim',
      },
    ]);
    expect(result.state.report).toBe(
      'Claim: Zebras invented jazz\n(published with 1 error(s) recorded)',
    );
  });

  it('sends every node that can fail to publish: search, plan past its visit cap, verify', () => {
    const onError = claims.def.nodes.flatMap((n) =>
      n.onError ? [`${n.name} -> ${n.onError}`] : [],
    );
    expect(onError).toEqual(['plan -> publish', 'search -> publish', 'verify -> publish']);
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
