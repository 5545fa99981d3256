import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { any, append, END, graph, replace, resume, run } from '../../src/index.js';
import { dyingAt, stores } from '../support/stores.js';
import { type Calls, reviewGraph } from './fixtures.js';

const Files = z.object({
  files: z.array(z.string()),
  verdicts: z.array(z.string()).default([]),
  log: z.array(z.string()).default([]),
});

/** A map over `files`: each item is prepared, then runs the review child; collected in item order. */
function mapped(calls: Calls, delays?: (i: number) => number) {
  const child = reviewGraph(calls);
  return graph('audit-all', { state: Files, reducers: { verdicts: append, log: append } })
    .node('list', () => undefined, { reads: [], writes: [] })
    .node(
      'prepare',
      async (_s, ctx) => {
        if (delays) await new Promise((r) => setTimeout(r, delays(ctx.index!)));
        return { log: [ctx.item as string] };
      },
      { reads: [], writes: ['log'] },
    )
    .subgraph('review', child, {
      // Every node of a branch knows its item, the subgraph's input mapping too.
      input: (_s, { item }) => ({ draft: item as string }),
      output: (o) => ({ verdicts: [o.verdict] }),
      reads: [],
      writes: ['verdicts'],
    })
    .node('collect', () => undefined, { reads: ['verdicts'], writes: [] })
    .map('list', { over: 'files', branch: 'prepare', join: 'collect', concurrency: 8 })
    .edge('prepare', 'review')
    .edge('review', 'collect')
    .edge('collect', END)
    .entry('list')
    .compile();
}

const files = Array.from({ length: 50 }, (_, i) =>
  i % 3 === 0 ? `short ${i}` : `a long file ${i}`,
);
const expected = files.map((f) => (f.split(' ').length >= 3 ? 'accept' : 'reject'));

describe('a map whose branch runs a subgraph', () => {
  it('runs the 4-node child once per item, with its router, and merges in item order', async () => {
    const calls: Calls = {};
    // Later items finish first: the merge must not follow completion order.
    const result = await run(
      mapped(calls, (i) => 50 - i),
      { files },
    );

    expect(result.status).toBe('succeeded');
    expect(result.state.verdicts).toEqual(expected);
    expect(result.state.log).toEqual(files);
    expect(calls).toEqual({
      read: 50,
      score: 50,
      accept: expected.filter((v) => v === 'accept').length,
      reject: expected.filter((v) => v === 'reject').length,
    });
    expect(result.trace.entries.map((e) => e.activation)).toContain('list:1[49]/review/read:1');
  });

  it('keeps each branch its own child state: no item sees another item', async () => {
    const result = await run(mapped({}), { files: ['x y z', 'x'] });

    expect(result.state.verdicts).toEqual(['accept', 'reject']);
  });
});

describe('a fan-out inside a fan-out', () => {
  const Rows = z.object({
    rows: z.array(z.array(z.number())),
    row: z.array(z.number()).default([]),
    cells: z.array(z.string()).default([]),
  });

  function nested(
    calls: Calls = {},
    options: { fail?: (v: number) => boolean; delay?: boolean } = {},
  ) {
    // `row` is each outer branch's own: replace, so the rows' writes merge without a conflict.
    return graph('nested', { state: Rows, reducers: { cells: append, row: replace } })
      .node('start', () => undefined, { reads: [], writes: [] })
      .node('row', (_s, ctx) => ({ row: ctx.item as number[] }), { reads: [], writes: ['row'] })
      .node(
        'cell',
        async (_s, ctx) => {
          const v = ctx.item as number;
          calls[`cell ${v}`] = (calls[`cell ${v}`] ?? 0) + 1;
          if (options.delay) await new Promise((r) => setTimeout(r, 20 - (v % 20)));
          if (options.fail?.(v)) throw new Error(`cell ${v} failed`);
          return { cells: [`${v}`] };
        },
        { reads: [], writes: ['cells'], retry: { attempts: 1 } },
      )
      .node('row-done', (_s, ctx) => ({ cells: [`row of ${ctx.join?.merged.length}`] }), {
        reads: [],
        writes: ['cells'],
      })
      .node('done', (_s, ctx) => ({ cells: [`rows ${ctx.join?.merged.join(',')}`] }), {
        reads: [],
        writes: ['cells'],
      })
      .map('start', { over: 'rows', branch: 'row', join: 'done' })
      .map('row', { over: 'row', branch: 'cell', join: 'row-done' })
      .edge('cell', 'row-done')
      .edge('row-done', 'done')
      .edge('done', END)
      .entry('start')
      .compile();
  }

  it('validates: nested fan-outs are no longer refused', () => {
    expect(nested().def.fanOuts).toHaveLength(2);
  });

  it('joins each inner map on its own tokens and merges rows and cells in item order', async () => {
    const rows = [[1, 2, 3], [4], [5, 6]];
    const result = await run(nested({}, { delay: true }), { rows });

    expect(result.status).toBe('succeeded');
    expect(result.state.cells).toEqual([
      '1',
      '2',
      '3',
      'row of 3',
      '4',
      'row of 1',
      '5',
      '6',
      'row of 2',
      'rows 0,1,2',
    ]);
    const ids = result.trace.entries.map((e) => e.activation);
    expect(ids).toContain('start:1[2]/row:1[1]/cell:1');
    expect(ids).toContain('start:1[2]/row-done:1');
  });

  it('a failed inner branch fails its row and the run; a resume runs only that cell again', async () => {
    for (const [name, makeStore] of stores) {
      const store = makeStore();
      const calls: Calls = {};
      let broken = true;
      const g = nested(calls, { fail: (v) => broken && v === 5 });
      const first = await run(
        g,
        {
          rows: [
            [1, 2],
            [5, 6],
          ],
        },
        { store, runId: `r-${name}` },
      );

      expect(first.status).toBe('failed');
      expect(first.status === 'failed' && first.error.code).toBe('JOIN_FAILED');
      broken = false;
      const second = await resume(store, g, `r-${name}`);

      expect(second.status).toBe('succeeded');
      expect(second.state.cells).toEqual(['1', '2', 'row of 2', '5', '6', 'row of 2', 'rows 0,1']);
      expect(calls).toMatchObject({ 'cell 1': 1, 'cell 2': 1, 'cell 5': 2 });
    }
  });

  it.each(stores)(
    'a crash inside an inner map resumes with no committed activation run again (%s)',
    async (_n, makeStore) => {
      const store = makeStore();
      const calls: Calls = {};
      const g = nested(calls);
      const rows = [
        [1, 2],
        [3, 4],
      ];
      // The four cells end together and are committed as one group (seqs 5-8); the crash comes
      // at the next group, the inner joins', so every cell is recorded and no row is done.
      await run(g, { rows }, { store: dyingAt(store, 9), runId: 'r' }).catch(() => undefined);
      const committed = new Set(
        (await store.events('r'))
          .map((e) => JSON.parse(e.event) as { type: string; activation?: string })
          .filter((e) => e.type === 'completed')
          .map((e) => e.activation),
      );
      expect([...committed].some((id) => id?.includes('/cell:'))).toBe(true);
      expect([...committed].some((id) => id?.includes('/row-done:'))).toBe(false);

      const resumed = await resume(store, g, 'r');

      expect(resumed.status).toBe('succeeded');
      expect(resumed.state.cells).toEqual(['1', '2', 'row of 2', '3', '4', 'row of 2', 'rows 0,1']);
      expect(resumed.trace.entries.filter((e) => committed.has(e.activation))).toEqual([]);
    },
  );

  const Race = z.object({
    rows: z.array(z.string()),
    cells: z.array(z.string()).default([]),
  });
  const sleep = (ms: number, signal: AbortSignal) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      signal.addEventListener('abort', () => {
        clearTimeout(timer);
        resolve();
      });
    });

  it('an inner any() join cancels only its own branches; the outer join still counts every row', async () => {
    const aborted: string[] = [];
    const g = graph('race', { state: Race, reducers: { cells: append } })
      .node('start', () => undefined, { reads: [], writes: [] })
      .node('row', () => undefined, { reads: [], writes: [] })
      .node('fast', (_s, ctx) => ({ cells: [`fast ${ctx.activationId}`] }), {
        reads: [],
        writes: ['cells'],
      })
      .node(
        'slow',
        async (_s, ctx) => {
          await sleep(2_000, ctx.signal);
          if (ctx.signal.aborted) aborted.push(ctx.activationId);
          return { cells: ['slow'] };
        },
        { reads: [], writes: ['cells'] },
      )
      .node('first', () => undefined, { reads: [], writes: [], join: any() })
      .node('all-rows', (_s, ctx) => ({ cells: [`rows ${ctx.join?.merged.join(',')}`] }), {
        reads: [],
        writes: ['cells'],
      })
      .map('start', { over: 'rows', branch: 'row', join: 'all-rows' })
      .fanOut('row', ['fast', 'slow'], 'first')
      .edge('fast', 'first')
      .edge('slow', 'first')
      .edge('first', 'all-rows')
      .edge('all-rows', END)
      .entry('start')
      .compile();

    const result = await run(g, { rows: ['a', 'b', 'c'] });

    expect(result.status).toBe('succeeded');
    expect(result.state.cells).toEqual([
      'fast start:1[0]/row:1[0]/fast:1',
      'fast start:1[1]/row:1[0]/fast:1',
      'fast start:1[2]/row:1[0]/fast:1',
      'rows 0,1,2',
    ]);
    await new Promise((r) => setTimeout(r, 10));
    expect(aborted.sort()).toEqual([
      'start:1[0]/row:1[1]/slow:1',
      'start:1[1]/row:1[1]/slow:1',
      'start:1[2]/row:1[1]/slow:1',
    ]);
  });

  it('an outer any() join cancels the fan-outs opened inside the branches it drops', async () => {
    const aborted: string[] = [];
    const g = graph('outer-race', { state: Race, reducers: { cells: append } })
      .node('start', () => undefined, { reads: [], writes: [] })
      .node('row', () => undefined, { reads: [], writes: [] })
      .node(
        'cell',
        async (_s, ctx) => {
          const row = ctx.activationId.startsWith('start:1[0]') ? 0 : 1;
          if (row === 1) await sleep(2_000, ctx.signal);
          if (ctx.signal.aborted) aborted.push(ctx.activationId);
          return { cells: [`cell ${row}`] };
        },
        { reads: [], writes: ['cells'] },
      )
      .node('row-done', () => undefined, { reads: [], writes: [] })
      .node('winner', (_s, ctx) => ({ cells: [`won by ${ctx.join?.merged.join(',')}`] }), {
        reads: [],
        writes: ['cells'],
        join: any(),
      })
      .map('start', { over: 'rows', branch: 'row', join: 'winner' })
      .fanOut('row', ['cell', 'cell'], 'row-done')
      .edge('cell', 'row-done')
      .edge('row-done', 'winner')
      .edge('winner', END)
      .entry('start')
      .compile();

    const result = await run(g, { rows: ['a', 'b'] });

    expect(result.status).toBe('succeeded');
    expect(result.state.cells).toEqual(['cell 0', 'cell 0', 'won by 0']);
    await new Promise((r) => setTimeout(r, 10));
    expect(aborted.sort()).toEqual(['start:1[1]/row:1[0]/cell:1', 'start:1[1]/row:1[1]/cell:1']);
  });
});
