import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { append, END, graph, MemoryStore, resume, run } from '../../src/index.js';
import { PostState, reviewGraph } from './fixtures.js';

// A subgraph's node is an ordinary node of its graph: an onError route, a fan-out from it, the
// join of a map, a breakpoint.
describe('a subgraph node in the places any node can be', () => {
  it("follows the subgraph's onError when its input mapping fails", async () => {
    const g = graph('handled', { state: PostState })
      .subgraph('review', reviewGraph(), {
        input: () => ({ draft: 7 }) as never,
        output: {},
        onError: 'fallback',
      })
      .node('fallback', (_s, ctx) => ({ verdict: `fallback after ${ctx.error?.code}` }))
      .edge('review', END)
      .edge('fallback', END)
      .entry('review')
      .compile();

    const result = await run(g, { text: 'x' });

    expect(result.status).toBe('succeeded');
    expect(result.state.verdict).toBe('fallback after INPUT_INVALID');
    expect(result.errors.map((e) => [e.node, e.code])).toEqual([['review', 'INPUT_INVALID']]);
  });

  it('opens a fan-out from the subgraph node once the child has handed its output back', async () => {
    const State = z.object({
      text: z.string(),
      verdict: z.string().default(''),
      copies: z.array(z.string()).default([]),
      targets: z.array(z.string()).default(['a', 'b']),
    });
    const g = graph('fan', { state: State, reducers: { copies: append } })
      .subgraph('review', reviewGraph(), {
        input: { draft: 'text' },
        output: { verdict: 'verdict' },
        writes: ['verdict'],
      })
      .node('copy', (s, ctx) => ({ copies: [`${ctx.item}:${s.verdict}`] }), {
        reads: ['verdict'],
        writes: ['copies'],
      })
      .node('done', () => undefined, { reads: [], writes: [] })
      .map('review', { over: 'targets', branch: 'copy', join: 'done' })
      .edge('copy', 'done')
      .edge('done', END)
      .entry('review')
      .compile();

    const result = await run(g, { text: 'one two three' });

    expect(result.state.copies).toEqual(['a:accept', 'b:accept']);
  });

  it('is the join of a map: entered once, on the merged state', async () => {
    const State = z.object({
      parts: z.array(z.string()),
      text: z.string().default(''),
      verdict: z.string().default(''),
    });
    const joined = (a: string, b: string) => (a === '' ? b : `${a} ${b}`);
    const g = graph('joined', {
      state: State,
      reducers: { text: { name: 'joined', apply: joined } },
    })
      .node('split', () => undefined, { reads: [], writes: [] })
      .node('part', (_s, ctx) => ({ text: String(ctx.item) }), { reads: [], writes: ['text'] })
      .subgraph('review', reviewGraph(), {
        input: { draft: 'text' },
        output: { verdict: 'verdict' },
      })
      .map('split', { over: 'parts', branch: 'part', join: 'review' })
      .edge('part', 'review')
      .edge('review', END)
      .entry('split')
      .compile();

    const result = await run(g, { parts: ['one', 'two', 'three'] });

    expect(result.state).toMatchObject({ text: 'one two three', verdict: 'accept' });
    expect(result.trace.path.filter((n) => n === 'review/read')).toHaveLength(1);
  });

  it('stops at a breakpoint before the subgraph, and a resume enters it', async () => {
    const store = new MemoryStore();
    const g = graph('paused', { state: PostState })
      .node('prep', () => undefined, { reads: [], writes: [] })
      .subgraph('review', reviewGraph(), {
        input: { draft: 'text' },
        output: { verdict: 'verdict' },
      })
      .edge('prep', 'review')
      .edge('review', END)
      .entry('prep')
      .compile();

    const first = await run(
      g,
      { text: 'one two three' },
      { store, runId: 'r', pauseBefore: ['review'] },
    );
    expect(first.status).toBe('waiting');
    expect(first.trace.path).toEqual(['prep']);

    const second = await resume(store, g, 'r');

    expect(second.status).toBe('succeeded');
    expect(second.state.verdict).toBe('accept');
    expect(second.trace.path).toEqual(['review/read', 'review/score', 'review/accept']);
  });

  it('fails the run at a failing child node and resumes there once it is fixed', async () => {
    const store = new MemoryStore();
    const fail = new Set(['score']);
    const calls: Record<string, number> = {};
    const g = graph('fixed', { state: PostState })
      .subgraph('review', reviewGraph(calls, { fail }), {
        input: { draft: 'text' },
        output: { verdict: 'verdict' },
      })
      .edge('review', END)
      .entry('review')
      .compile();

    const first = await run(g, { text: 'one two three' }, { store, runId: 'r' });
    expect(first.status === 'failed' && first.error).toMatchObject({
      node: 'review/score',
      activation: 'review/score:1',
      code: 'NODE_FAILED',
    });
    fail.clear();
    const second = await resume(store, g, 'r');

    expect(second.status).toBe('succeeded');
    expect(second.state.verdict).toBe('accept');
    expect(calls).toEqual({ read: 1, score: 2, accept: 1 });
  });
});
