import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  all,
  answer,
  END,
  graph,
  MemoryStore,
  permanentError,
  person,
  resume,
  run,
} from '../../src/index.js';
import { coverageItems, formatCoverage, graphCoverage } from '../../src/testing/index.js';

const State = z.object({
  go: z.enum(['work', 'ask', 'end', 'loop']).default('work'),
  fail: z.boolean().default(false),
  failBranch: z.boolean().default(false),
  n: z.number().default(0),
  ok: z.boolean().default(false),
});

// One of each coverable decision: a router with three targets (END among them), an onError
// edge, a fan-out's join, a person's wait and a visit cap on a loop.
const review = graph('review', { state: State })
  .node('start', () => ({}))
  .node(
    'work',
    (s) => {
      if (s.fail) throw permanentError('no');
      return {};
    },
    { onError: 'recover' },
  )
  .node('recover', () => ({}), { terminal: true })
  .node('ask', person({ prompt: () => 'ok?', answer: z.object({ ok: z.boolean() }) }))
  .node('again', (s) => ({ n: s.n + 1 }), { visits: 2, onError: 'recover' })
  .node('split', () => ({}))
  .node('left', () => ({}), { writes: [] })
  .node(
    'right',
    (s) => {
      if (s.failBranch) throw permanentError('right failed');
      return {};
    },
    { writes: [] },
  )
  .node('merge', () => ({}), { join: all(), onError: 'recover', terminal: true })
  .route(
    'start',
    (s) => (s.go === 'work' ? 'work' : s.go === 'ask' ? 'ask' : s.go === 'loop' ? 'again' : END),
    ['work', 'ask', 'again', END],
  )
  .edge('work', 'split')
  .edge('ask', END)
  .edge('again', 'again')
  .fanOut('split', ['left', 'right'], 'merge')
  .edge('left', 'merge')
  .edge('right', 'merge')
  .entry('start')
  .compile();

describe('graph coverage', () => {
  it('lists every declared route target, error edge, join outcome, wait and cap as an item', () => {
    expect(coverageItems(review).map((i) => i.id)).toEqual([
      ...[
        'route start -> work',
        'route start -> ask',
        'route start -> again',
        'route start -> __end__',
      ],
      'error work -> recover',
      'wait ask',
      ...['error again -> recover', 'cap again'],
      ...['error merge -> recover', 'join merge merged', 'join merge failed'],
    ]);
  });

  it('marks what the runs a store holds took, and lists what they missed', async () => {
    const store = new MemoryStore();
    await run(review, { go: 'work' }, { store });
    await run(review, { go: 'end' }, { store });
    const coverage = graphCoverage(review);

    await coverage.record(store);

    const report = coverage.report();
    expect(report.runs).toBe(2);
    expect(report.kinds.route).toEqual({ covered: 2, total: 4, percent: 50 });
    expect(report.missed.map((i) => i.id)).toEqual([
      'route start -> ask',
      'route start -> again',
      'error work -> recover',
      'wait ask',
      'error again -> recover',
      'cap again',
      'error merge -> recover',
      'join merge failed',
    ]);
  });

  it('reaches 100% when the runs take every decision: a failure, a wait answered, a cap hit, a failed join', async () => {
    const store = new MemoryStore();
    for (const input of [
      { go: 'work' },
      { go: 'end' },
      { go: 'work', fail: true },
      { go: 'loop' },
      { go: 'work', failBranch: true },
    ] as const)
      await run(review, input, { store });
    await run(review, { go: 'ask' }, { store, runId: 'asked' });
    await answer(store, 'asked', 'asked/ask:1', { ok: true }, { by: 'test' });
    await resume(store, review, 'asked');
    const coverage = graphCoverage(review);

    await coverage.record(store);

    const report = coverage.report();
    expect(report.missed).toEqual([]);
    expect(report.items.find((i) => i.id === 'cap again')?.runs).toBe(1);
    expect(formatCoverage(report)).toBe(
      [
        'coverage of review over 6 run(s)',
        '  routes    100%  4/4',
        '  errors    100%  3/3',
        '  joins     100%  2/2',
        '  waits     100%  1/1',
        '  caps      100%  1/1',
      ].join('\n'),
    );
  });

  it('skips a run of another version of the graph, saying why, and ignores runs of other graphs', async () => {
    const store = new MemoryStore();
    const other = graph('other', { state: State })
      .node('a', () => ({}))
      .edge('a', END)
      .entry('a')
      .compile();
    await run(other, {}, { store });
    const changed = graph('review', { state: State })
      .node('start', () => ({}))
      .edge('start', END)
      .entry('start')
      .compile();
    await run(changed, {}, { store, runId: 'old' });
    const coverage = graphCoverage(review);

    await coverage.record(store);

    expect(coverage.report().runs).toBe(0);
    expect(coverage.report().skipped).toEqual([{ runId: 'old', reason: 'graph-changed' }]);
  });
});
