import { describe, expect, it } from 'vitest';
import { answer, MemoryStore, resume, run } from '../../src/index.js';
import { scriptedModel } from '../../src/model/index.js';
import { graphCoverage } from '../../src/testing/index.js';
import triage, { bugTriage } from './graph.js';

describe('the bug-triage example, covered', () => {
  it('its scenarios (bug-triage.test.ts) take every declared route and error edge', async () => {
    const store = new MemoryStore();
    for (const bug of [
      'search-pagination',
      'export-missing-email',
      'webhook-flaky',
      'webhook-down',
    ] as const)
      await run(triage, { bug }, { store });
    await run(triage, { bug: 'billing-rounding' }, { store, runId: 'bill' });
    await answer(store, 'bill', 'bill/approve:1', { approved: true }, { by: 'finance-lead' });
    await resume(store, triage, 'bill');
    // A fix that does not pass its repro, and one that names a file outside the workspace.
    await run(
      bugTriage({ fixCode: scriptedModel([{ object: { files: [] } }]) }),
      { bug: 'billing-rounding' },
      { store },
    );
    const outside = [{ path: '../../outside.mjs', content: 'export {}' }];
    await run(
      bugTriage({ fixCode: scriptedModel([{ object: { files: outside } }]) }),
      { bug: 'search-pagination' },
      { store },
    );
    const coverage = graphCoverage(triage);

    await coverage.record(store);

    const { kinds, missed } = coverage.report();
    expect(missed.filter((i) => i.kind === 'route' || i.kind === 'error')).toEqual([]);
    expect([kinds.route.percent, kinds.error.percent]).toEqual([100, 100]);
  }, 60_000);
});
