import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { all, append, END, graph, loadTrace, quorum, resume, run } from '../../src/index.js';
import { stores } from '../support/stores.js';

// "A run that dies at step 9 resumes at step 9": after the cause is fixed (the node's code, a
// raised cap, a router's reads), resume continues from the failed activation and runs only what
// did not complete.

const State = z.object({
  log: z.array(z.string()).default([]),
  n: z.number().default(0),
  secret: z.string().default('s'),
});

const tick = () => new Promise((resolve) => setTimeout(resolve, 5));

describe.each(stores)(
  'failed runs resume where they failed, with the %s store',
  (_name, makeStore) => {
    it('one plain throw in a fan-out branch: the resume runs that branch again, its finished siblings are read back', async () => {
      const store = makeStore();
      const calls: string[] = [];
      let broken = true;
      const g = graph('fan', { state: State, reducers: { log: append } })
        .node('split', () => {
          calls.push('split');
          return {};
        })
        .node(
          'a',
          () => {
            calls.push('a');
            return { log: ['a'] };
          },
          { writes: ['log'] },
        )
        .node(
          'b',
          async () => {
            calls.push('b');
            await tick(); // a and c finish first
            if (broken) throw new Error('b is broken');
            return { log: ['b'] };
          },
          { writes: ['log'] },
        )
        .node(
          'c',
          () => {
            calls.push('c');
            return { log: ['c'] };
          },
          { writes: ['log'] },
        )
        .node(
          'merge',
          () => {
            calls.push('merge');
            return {};
          },
          { join: all(), terminal: true },
        )
        .fanOut('split', ['a', 'b', 'c'], 'merge')
        .edge('a', 'merge')
        .edge('b', 'merge')
        .edge('c', 'merge')
        .entry('split')
        .compile();

      const first = await run(g, {}, { store, runId: 'r' });
      expect(first.status === 'failed' && first.error.code).toBe('JOIN_FAILED');

      broken = false; // the node's code is fixed
      const second = await resume(store, g, 'r');

      expect(second.status).toBe('succeeded');
      expect(second.state.log).toEqual(['a', 'b', 'c']); // merged in branch order
      expect(calls).toEqual(['split', 'a', 'b', 'c', 'b', 'merge']);
      expect(second.trace.path).toEqual(['b', 'merge']);
    });

    it('a quorum the failures made unreachable: the resume tries the failed branches again', async () => {
      const store = makeStore();
      const runs: Record<string, number> = {};
      let broken = true;
      const branch = (name: string, fails: boolean) => async () => {
        runs[name] = (runs[name] ?? 0) + 1;
        if (fails) await tick(); // a has finished when they fail
        if (fails && broken) throw new Error(`${name} is down`);
        return { log: [name] };
      };
      const g = graph('quorum', { state: State, reducers: { log: append } })
        .node('split', () => ({}))
        .node('a', branch('a', false), { writes: ['log'] })
        .node('b', branch('b', true), { writes: ['log'] })
        .node('c', branch('c', true), { writes: ['log'] })
        .node('merge', () => ({}), { join: quorum(2), terminal: true })
        .fanOut('split', ['a', 'b', 'c'], 'merge')
        .edge('a', 'merge')
        .edge('b', 'merge')
        .edge('c', 'merge')
        .entry('split')
        .compile();

      const first = await run(g, {}, { store, runId: 'r' });
      expect(first.status === 'failed' && first.error.code).toBe('JOIN_FAILED');

      broken = false;
      const second = await resume(store, g, 'r');

      expect(second.status).toBe('succeeded');
      expect(runs.a).toBe(1);
      expect(second.state.log).toEqual(['a', 'b']); // the first two to succeed, in branch order
    });

    it('a visit cap: the resume under a graph with a raised cap continues from the capped activation', async () => {
      const store = makeStore();
      let calls = 0;
      const looping = (visits: number) =>
        graph('loop', { state: State })
          .node(
            'count',
            (s) => {
              calls++;
              return { n: s.n + 1 };
            },
            { visits },
          )
          .route('count', (s) => (s.n >= 3 ? END : 'count'), ['count', END])
          .entry('count')
          .compile();

      const first = await run(looping(2), {}, { store, runId: 'r' });
      expect(first.status === 'failed' && first.error).toMatchObject({
        code: 'VISIT_CAP',
        activation: 'count:3',
      });

      // Under the same graph, the cap stops it again: the resume runs, and nothing changes.
      const again = await resume(store, looping(2), 'r');
      expect(again.status === 'failed' && again.error.code).toBe('VISIT_CAP');
      expect(calls).toBe(2);

      const raised = await resume(store, looping(3), 'r');

      expect(raised.status).toBe('succeeded');
      expect(raised.state.n).toBe(3);
      expect(calls).toBe(3);
      expect((await loadTrace(store, 'r')).entries.map((e) => e.activation)).toEqual([
        'count:1',
        'count:2',
        'count:3',
      ]);
    });

    it("a router that reads outside its node's fields: fixed reads, and the resume routes without running the node again", async () => {
      const store = makeStore();
      let calls = 0;
      const declared = (reads: readonly ('n' | 'secret')[]) =>
        graph('router', { state: State })
          .node(
            'decide',
            () => {
              calls++;
              return { n: 1 };
            },
            { reads, writes: ['n'] },
          )
          .node('left', () => ({ log: ['left'] }), { terminal: true })
          .node('right', () => ({ log: ['right'] }), { terminal: true })
          .route('decide', (s) => (s.secret === 's' ? 'left' : 'right'), ['left', 'right'])
          .entry('decide')
          .compile();

      const first = await run(declared(['n']), {}, { store, runId: 'r' });
      expect(first.status === 'failed' && first.error.code).toBe('READ_DENIED');

      const second = await resume(store, declared(['n', 'secret']), 'r');

      expect(second.status).toBe('succeeded');
      expect(second.state.log).toEqual(['left']);
      expect(calls).toBe(1);
      expect(second.trace.path).toEqual(['left']);
    });
  },
);

describe.each(stores)(
  'which graph edits a resume accepts, with the %s store',
  (_name, makeStore) => {
    // fetch -> work -> publish; work fails the first time.
    const pipeline = (
      options: {
        readonly work?: () => object;
        readonly retry?: number;
        readonly timeoutMs?: number;
        readonly reads?: readonly 'n'[];
        readonly drop?: boolean;
      } = {},
    ) => {
      let b = graph('edits', { state: State })
        .node('fetch', () => ({ n: 1 }))
        .node('work', options.work ?? (() => ({ log: ['worked'] })), {
          ...(options.retry !== undefined && { retry: { attempts: options.retry } }),
          ...(options.timeoutMs !== undefined && { timeoutMs: options.timeoutMs }),
          ...(options.reads !== undefined && { reads: options.reads }),
        })
        .node('publish', () => ({ log: ['published'] }), { terminal: true })
        .edge('fetch', 'work');
      if (options.drop) {
        // "work" is gone: fetch goes straight on.
        return graph('edits', { state: State })
          .node('fetch', () => ({ n: 1 }))
          .node('publish', () => ({ log: ['published'] }), { terminal: true })
          .edge('fetch', 'publish')
          .entry('fetch')
          .compile();
      }
      b = b.edge('work', 'publish');
      return b.entry('fetch').compile();
    };
    const failing = () => {
      throw new Error('work is broken');
    };

    it.each([
      ['a changed function body', { work: () => ({ log: ['worked'] }) }],
      ['a retry policy', { retry: 3 }],
      ['a timeout', { timeoutMs: 5_000 }],
      ['reads', { reads: ['n'] as const }],
    ])('accepts %s at the failed activation, and runs only from there', async (_what, edit) => {
      const store = makeStore();
      const first = await run(pipeline({ work: failing }), {}, { store, runId: 'r' });
      expect(first.status).toBe('failed');

      const second = await resume(store, pipeline(edit), 'r');

      expect(second.status).toBe('succeeded');
      expect(second.trace.path).toEqual(['work', 'publish']);
    });

    it('refuses a graph that removed the node the run failed at: GRAPH_MISMATCH, nothing written', async () => {
      const store = makeStore();
      await run(pipeline({ work: failing }), {}, { store, runId: 'r' });
      const before = (await store.getRun('r'))?.seq;

      await expect(resume(store, pipeline({ drop: true }), 'r')).rejects.toMatchObject({
        code: 'GRAPH_MISMATCH',
        message: expect.stringContaining('"work"'),
      });
      expect((await store.getRun('r'))?.seq).toBe(before);
    });
  },
);
