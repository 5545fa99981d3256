import { describe, expect, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import { answer, END, graph, loadTrace, resume, rewind, run, sum } from '../../src/index.js';
import { dyingAt, stores } from '../support/stores.js';
import { askGraph, type Calls, PostState, postGraph, reviewGraph } from './fixtures.js';

describe('a subgraph run as one node', () => {
  it('runs the child nodes under its path and maps the child output back into the parent', async () => {
    const calls: Calls = {};
    const result = await run(postGraph(calls), { text: ' a good long draft ' });

    expect(result.status).toBe('succeeded');
    // The entry and exit map the input in and the output out inline: no steps of their own.
    expect(result.trace.path).toEqual([
      'prep',
      'review/read',
      'review/score',
      'review/accept',
      'publish',
    ]);
    expect(result.steps).toBe(5);
    expect(result.state).toMatchObject({
      verdict: 'accept',
      log: ['read', 'scored', 'accepted'],
      published: true,
    });
    expect(calls).toEqual({ prep: 1, read: 1, score: 1, accept: 1, publish: 1 });
  });

  it("keeps the child's private fields out of the parent: its slot is cleared when it ends", async () => {
    const result = await run(postGraph(), { text: 'short' });

    // The slot is the runtime's working space: the result shows the parent's fields only.
    expect(Object.keys(result.state).sort()).toEqual(['log', 'published', 'text', 'verdict']);
    expect(result.output).toEqual(result.state);
    expect(JSON.stringify(result.state)).not.toContain('kept inside');
    expect(result.state.verdict).toBe('reject');
  });

  it("does not show a child's state in the result of a run waiting inside it", async () => {
    const result = await run(askGraph(), { text: 'post' });

    expect(result.status).toBe('waiting');
    expect(Object.keys(result.state).sort()).toEqual(['result', 'text']);
    expect(JSON.stringify(result)).not.toContain('post!');
  });

  it('follows the child router under the path: the activation ids carry it', async () => {
    const result = await run(postGraph(), { text: 'too short' });

    expect(result.trace.entries.map((e) => e.activation)).toContain('review/reject:1');
    expect(result.trace.entries.find((e) => e.node === 'review/read')?.parent).toBe('review:1');
  });

  it('refuses an input mapping whose child input does not match the child input schema', async () => {
    const g = graph('bad-input', { state: PostState })
      .subgraph('review', reviewGraph(), { input: () => ({ draft: 42 }) as never, output: {} })
      .edge('review', END)
      .entry('review')
      .compile();

    const result = await run(g, { text: 'x' });

    expect(result.status).toBe('failed');
    expect(result.status === 'failed' && result.error).toMatchObject({
      node: 'review',
      code: 'INPUT_INVALID',
    });
  });

  it('refuses an input mapping that sets a field the child keeps private', async () => {
    const g = graph('private-input', { state: PostState })
      .subgraph('review', reviewGraph(), {
        input: (s) => ({ draft: s.text, secret: 'forged' }) as { draft: string },
        output: {},
      })
      .edge('review', END)
      .entry('review')
      .compile();

    const result = await run(g, { text: 'x' });

    expect(result.status === 'failed' && result.error.code).toBe('INPUT_NOT_ALLOWED');
  });

  it("holds the mapping to the subgraph's reads and writes like a node", async () => {
    const child = reviewGraph();
    const reads = graph('reads', { state: PostState })
      .subgraph('review', child, {
        input: (s) => ({ draft: s.verdict }),
        output: {},
        reads: ['text'],
      })
      .edge('review', END)
      .entry('review')
      .compile();
    const writes = graph('writes', { state: PostState })
      .subgraph('review', child, {
        input: { draft: 'text' },
        // @ts-expect-error: published is not among the writes
        output: () => ({ published: true }),
        writes: ['verdict'],
      })
      .edge('review', END)
      .entry('review')
      .compile();

    const denied = await run(reads, { text: 'a b c' });
    const refused = await run(writes, { text: 'a b c' });

    expect(denied.status === 'failed' && denied.error.code).toBe('READ_DENIED');
    expect(refused.status === 'failed' && refused.error).toMatchObject({
      code: 'WRITE_DENIED',
      node: 'review/__end__',
    });
  });

  it('infers the mapping types from both graphs', () => {
    graph('typed', { state: PostState }).subgraph('review', reviewGraph(), {
      input: (s) => {
        expectTypeOf(s.text).toEqualTypeOf<string>();
        return { draft: s.text };
      },
      output: (o) => {
        expectTypeOf(o).toEqualTypeOf<Readonly<{ verdict: string; notes: string[] }>>();
        return { verdict: o.verdict };
      },
    });
    graph('typed', { state: PostState }).subgraph('review', reviewGraph(), {
      // @ts-expect-error: the child's input is { draft }, not { text }
      input: (s) => ({ text: s.text }),
    });
    graph('typed', { state: PostState }).subgraph('review', reviewGraph(), {
      // @ts-expect-error: a record names parent fields
      input: { draft: 'nope' },
    });
  });

  it('retries a failing child node under its own policy, inside the child', async () => {
    let attempts = 0;
    const State = z.object({ n: z.number().default(0) });
    const child = graph('flaky', { state: State })
      .node(
        'try',
        () => {
          attempts++;
          if (attempts < 3) throw new Error('503');
          return { n: attempts };
        },
        { retry: { attempts: 3 } },
      )
      .edge('try', END)
      .entry('try')
      .compile();
    const g = graph('outer', { state: State })
      .subgraph('flaky', child, { input: {}, output: { n: 'n' } })
      .edge('flaky', END)
      .entry('flaky')
      .compile();

    const result = await run(g, {});

    expect(result.status).toBe('succeeded');
    expect(result.state.n).toBe(3);
    expect(result.trace.entries.filter((e) => e.node === 'flaky/try').map((e) => e.status)).toEqual(
      ['failed', 'failed', 'succeeded'],
    );
  });

  it("stops a child loop at its node's visit cap, and a child node at its timeout", async () => {
    const State = z.object({ n: z.number().default(0) });
    const looping = graph('loop', { state: State })
      .node('again', (s) => ({ n: s.n + 1 }), { visits: 2 })
      .route('again', () => 'again', ['again', END])
      .entry('again')
      .compile();
    const slow = graph('slow', { state: State })
      .node('wait', () => new Promise<undefined>((r) => setTimeout(() => r(undefined), 200)), {
        timeoutMs: 20,
      })
      .edge('wait', END)
      .entry('wait')
      .compile();
    const outer = (name: string, child: typeof looping) =>
      graph(name, { state: State })
        .subgraph('child', child, { input: {}, output: {} })
        .edge('child', END)
        .entry('child')
        .compile();

    const capped = await run(outer('capped', looping), {});
    const timed = await run(outer('timed', slow), {});

    expect(capped.status === 'failed' && capped.error).toMatchObject({
      code: 'VISIT_CAP',
      node: 'child/again',
    });
    expect(timed.status === 'failed' && timed.error).toMatchObject({
      code: 'NODE_TIMEOUT',
      node: 'child/wait',
    });
  });

  it("books a child node's usage in the run's spend, against the run's budget", async () => {
    const State = z.object({ n: z.number().default(0) });
    const seen: unknown[] = [];
    const child = graph('metered', { state: State })
      .node('call', (_s, ctx) => {
        seen.push({ spend: ctx.spend.inputTokens, budget: ctx.budget });
        ctx.usage({ inputTokens: 40, outputTokens: 2 });
        return undefined;
      })
      .edge('call', END)
      .entry('call')
      .compile();
    const g = graph('outer', { state: State })
      .node('first', (_s, ctx) => {
        ctx.usage({ inputTokens: 100, outputTokens: 10 });
        return undefined;
      })
      .subgraph('metered', child, { input: {}, output: {} })
      .edge('first', 'metered')
      .edge('metered', END)
      .entry('first')
      .compile();

    const result = await run(g, {}, { budget: { maxTokens: 1_000 } });

    expect(seen).toEqual([{ spend: 100, budget: { maxTokens: 1_000 } }]);
    expect(result.spent).toMatchObject({ inputTokens: 140, outputTokens: 12 });
  });

  it("counts a child node's visit cap per entry of the child: each run of it gets the whole cap", async () => {
    const Loop = z.object({ n: z.number().default(0) });
    // Two rounds of `again` per run of the child, under a cap of 2.
    const child = graph('twice', { state: Loop })
      .node('again', (s) => ({ n: s.n + 1 }), { visits: 2 })
      .route('again', (s) => (s.n < 2 ? 'again' : END), ['again', END])
      .entry('again')
      .compile();
    const Items = z.object({ items: z.array(z.number()), total: z.number().default(0) });
    const g = graph('thrice', { state: Items, reducers: { total: sum } })
      .node('start', () => undefined, { reads: [], writes: [] })
      .subgraph('twice', child, {
        input: {},
        output: (o) => ({ total: o.n }),
        reads: [],
        writes: ['total'],
      })
      .node('end', () => undefined, { reads: [], writes: [] })
      .map('start', { over: 'items', branch: 'twice', join: 'end' })
      .edge('twice', 'end')
      .edge('end', END)
      .entry('start')
      .compile();

    const result = await run(g, { items: [1, 2, 3] });

    expect(result.status).toBe('succeeded');
    expect(result.state.total).toBe(6);
    // What each run of the child counted is gone with it.
    expect(result.status === 'succeeded' && JSON.stringify(result)).not.toContain('>twice/again');
  });

  it('runs a subgraph inside a subgraph, each under its own path', async () => {
    const calls: Calls = {};
    const State = z.object({ text: z.string(), verdict: z.string().default('') });
    const middle = graph('middle', { state: State })
      .subgraph('inner', reviewGraph(calls), {
        input: { draft: 'text' },
        output: { verdict: 'verdict' },
      })
      .edge('inner', END)
      .entry('inner')
      .compile();
    const outer = graph('outer', { state: State })
      .subgraph('mid', middle, { input: { text: 'text' }, output: { verdict: 'verdict' } })
      .edge('mid', END)
      .entry('mid')
      .compile();

    const result = await run(outer, { text: 'one two three' });

    expect(result.state.verdict).toBe('accept');
    expect(result.trace.path).toEqual(['mid/inner/read', 'mid/inner/score', 'mid/inner/accept']);
    expect(result.trace.entries[0]!.within).toEqual(['mid:1', 'mid/inner:1']);
  });

  it('enters a subgraph again in a loop of the parent, afresh each time', async () => {
    const State = z.object({
      text: z.string(),
      rounds: z.number().default(0),
      verdict: z.string().default(''),
    });
    const g = graph('rounds', { state: State })
      .subgraph('review', reviewGraph(), {
        input: (s) => ({ draft: `${s.text}${' more'.repeat(s.rounds)}` }),
        output: { verdict: 'verdict' },
        visits: 3,
      })
      .node('count', (s) => ({ rounds: s.rounds + 1 }))
      .edge('review', 'count')
      .route('count', (s) => (s.verdict === 'accept' ? END : 'review'), ['review', END])
      .entry('review')
      .compile();

    const result = await run(g, { text: 'one' });

    expect(result.state).toMatchObject({ verdict: 'accept', rounds: 3 });
    expect(result.trace.path.filter((n) => n === 'review/read')).toHaveLength(3);
    expect(result.trace.entries.map((e) => e.activation)).toContain('review/read:3');
  });

  it("changes the parent's structural hash when the child changes", () => {
    const a = postGraph();
    const b = postGraph({}, reviewGraph({}));
    const State = z.object({
      draft: z.string(),
      verdict: z.string().default(''),
      notes: z.array(z.string()).default([]),
    });
    const other = graph('review', { state: State })
      .node('read', () => undefined)
      .edge('read', END)
      .entry('read')
      .compile();

    expect(b.hash).toBe(a.hash);
    expect(postGraph({}, other as never).hash).not.toBe(a.hash);
  });
});

describe('validating a graph with a subgraph', () => {
  it('reports the child warnings under the path the child runs at', () => {
    const State = z.object({ x: z.string().default('') });
    const child = graph('child', { state: State })
      .node('a', () => undefined)
      .node('b', () => undefined, { reads: ['x'], writes: ['x'] })
      .node('j', () => undefined, { reads: ['x'], writes: ['x'] })
      .fanOut('a', ['b'], 'j')
      .edge('b', 'j')
      .edge('j', END)
      .entry('a')
      .compile();
    const problems = graph('parent', { state: State })
      .subgraph('sub', child, { input: {}, output: {} })
      .edge('sub', END)
      .entry('sub')
      .validate();

    expect(problems).toEqual([]);
    const warned = graph('child2', { state: State })
      .node('a', () => undefined)
      .node('b', () => undefined)
      .node('j', () => undefined)
      .fanOut('a', ['b'], 'j')
      .edge('b', 'j')
      .edge('j', END)
      .entry('a')
      .compile();
    const nested = graph('parent', { state: State })
      .subgraph('sub', warned, { input: {}, output: {} })
      .edge('sub', END)
      .entry('sub')
      .validate()
      .map((d) => `${d.code} at ${d.node}`);

    expect(nested).toEqual(['READS_UNDECLARED at sub/b', 'WRITES_UNDECLARED at sub/b']);
  });

  it('checks record mappings against both schemas', () => {
    const problems = graph('parent', { state: PostState })
      .subgraph('review', reviewGraph(), {
        input: { draft: 'txt', words: 'text' } as never,
        output: { verdict: 'verdikt', nothing: 'notes' } as never,
      })
      .edge('review', END)
      .entry('review')
      .validate()
      .map((d) => `${d.code} at ${d.node}: ${d.message}`);

    expect(problems).toEqual([
      'FIELD_UNKNOWN at review: subgraph "review" reads "txt" for its input "draft", which is not a state field',
      'FIELD_UNKNOWN at review: subgraph "review" sets "words", which is not an input of graph "review"',
      'FIELD_UNKNOWN at review: subgraph "review" writes "verdict" from "verdikt", which is not an output of graph "review"',
      'FIELD_UNKNOWN at review: subgraph "review" writes "nothing", which is not a state field',
    ]);
  });

  it('maps fields of the same name when no mapping is given, and checks them', () => {
    const problems = graph('parent', { state: z.object({ text: z.string() }) })
      .subgraph('review', reviewGraph())
      .edge('review', END)
      .entry('review')
      .validate()
      .map((d) => d.message);

    expect(problems).toEqual([
      'subgraph "review" reads "draft" for its input "draft", which is not a state field',
      'subgraph "review" writes "verdict", which is not a state field',
      'subgraph "review" writes "notes", which is not a state field',
    ]);
  });

  it('reports a node whose name a child node also runs under', () => {
    const problems = graph('parent', { state: PostState })
      .subgraph('review', reviewGraph(), { input: { draft: 'text' }, output: {} })
      .node('review/read', () => undefined)
      .edge('review', 'review/read')
      .edge('review/read', END)
      .entry('review')
      .validate()
      .map((d) => `${d.code} at ${d.node}`);

    expect(problems).toContain('NAME_DUPLICATE at review/read');
  });
});

describe.each(stores)('durability inside a subgraph, with the %s store', (_name, makeStore) => {
  it('a crash inside the child resumes inside it, and no completed child node runs again', async () => {
    const store = makeStore();
    const calls: Calls = {};
    const g = postGraph(calls);
    // seq 1 is the start; 2 prep, 3 review/read, 4 review/score: die as score commits.
    const dead = await run(
      g,
      { text: 'one two three' },
      { store: dyingAt(store, 4), runId: 'r' },
    ).catch((e: unknown) => e);
    expect(dead).toBeInstanceOf(Error);
    expect(calls).toMatchObject({ prep: 1, read: 1, score: 1 });

    const resumed = await resume(store, g, 'r');

    expect(resumed.status).toBe('succeeded');
    expect(calls).toEqual({ prep: 1, read: 1, score: 2, accept: 1, publish: 1 });
    expect(resumed.state.log).toEqual(['read', 'scored', 'accepted']);
  });

  it("a person's wait inside the child leaves the parent waiting, answerable through the parent run", async () => {
    const store = makeStore();
    const calls: Calls = {};
    const g = askGraph(calls);

    const first = await run(g, { text: 'post' }, { store, runId: 'r' });

    expect(first.status).toBe('waiting');
    const [wait] = await store.listWaits('r', { open: true });
    expect(wait).toMatchObject({ requestId: 'r/ask/approve:1', node: 'ask/approve' });
    expect(JSON.parse(wait!.request)).toMatchObject({ prompt: 'Publish "post!"?' });

    await answer(store, 'r', 'r/ask/approve:1', { approved: true }, { by: 'editor' });
    const done = await resume(store, g, 'r');

    expect(done.status).toBe('succeeded');
    expect(done.state.result).toBe('published post!');
    // LangGraph re-runs a subgraph's nodes before an interrupt on resume; here none runs again.
    expect(calls).toEqual({ start: 1, draft: 1, finish: 1 });
    expect((await loadTrace(store, 'r')).path).toEqual([
      'start',
      'ask/draft',
      'ask/approve',
      'ask/finish',
    ]);
  });

  it('rewinding to a node inside the child runs from there, not the whole child', async () => {
    const store = makeStore();
    const calls: Calls = {};
    const g = postGraph(calls);
    await run(g, { text: 'one two three' }, { store, runId: 'first' });
    expect(calls).toEqual({ prep: 1, read: 1, score: 1, accept: 1, publish: 1 });

    const second = await rewind(store, g, 'first', { to: 'review/score', runId: 'second' });

    expect(second.status).toBe('succeeded');
    // LangGraph re-runs the whole subgraph; here the new run starts at review/score. What it
    // reads is unchanged, so its recorded output (and those after it) are read back.
    expect(second.trace.path).toEqual(['review/score', 'review/accept', 'publish']);
    expect(calls).toEqual({ prep: 1, read: 1, score: 1, accept: 1, publish: 1 });
    expect(second.state).toMatchObject({ verdict: 'accept', log: ['read', 'scored', 'accepted'] });
  });

  it("rewinding to the subgraph's own node runs its child again from the child's first node", async () => {
    const store = makeStore();
    const g = postGraph();
    await run(g, { text: 'one two three' }, { store, runId: 'first' });

    const whole = await rewind(store, g, 'first', { to: 'review', runId: 'whole' });
    const first = await rewind(store, g, 'first', { to: 'review/read', runId: 'again' });

    expect(whole.status).toBe('succeeded');
    // The same as a rewind to the child's first node: the node before the subgraph is not run.
    expect(whole.trace.path).toEqual(['review/read', 'review/score', 'review/accept', 'publish']);
    expect(whole.trace.path).toEqual(first.trace.path);
    expect(whole.state).toEqual(first.state);
  });

  it("maps the child's input again from a rewind's update when rewinding to the subgraph", async () => {
    const store = makeStore();
    const calls: Calls = {};
    const g = postGraph(calls);
    await run(g, { text: 'one two three' }, { store, runId: 'first' });

    const noted = await rewind(store, g, 'first', {
      to: 'review',
      update: { text: 'short' },
      runId: 'noted',
    });

    // The child read the noted draft: one word, rejected; prep, before the subgraph, did not run.
    expect(noted.trace.path).toEqual(['review/read', 'review/score', 'review/reject', 'publish']);
    expect(noted.state).toMatchObject({ text: 'short', verdict: 'reject', published: false });
    expect(calls.prep).toBe(1);
  });

  it("refuses a rewind's update from which the child's input cannot be made", async () => {
    const Child = z.object({ draft: z.string().min(3), seen: z.string().default('') });
    const child = graph('strict', { state: Child })
      .node('see', (s) => ({ seen: s.draft }), { reads: ['draft'], writes: ['seen'] })
      .edge('see', END)
      .entry('see')
      .compile();
    const Parent = z.object({ text: z.string(), seen: z.string().default('') });
    const g = graph('parent', { state: Parent })
      .subgraph('strict', child, { input: { draft: 'text' }, output: { seen: 'seen' } })
      .edge('strict', END)
      .entry('strict')
      .compile();
    const store = makeStore();
    await run(g, { text: 'long enough' }, { store, runId: 'first' });

    const refused = await rewind(store, g, 'first', { to: 'strict', update: { text: 'no' } }).catch(
      (e: { code: string; message: string }) => e,
    );

    expect(refused).toMatchObject({ code: 'OPTIONS_INVALID' });
    expect((refused as { message: string }).message).toContain(
      'cannot enter subgraph "strict" again',
    );
  });

  it('reuses recorded outputs of child nodes by input hash in a later run', async () => {
    const store = makeStore();
    const calls: Calls = {};
    const g = postGraph(calls);
    const before = await run(g, { text: 'one two three' }, { store });

    const after = await run(g, { text: 'one two three' }, { store, reuseFrom: before.runId });

    expect(after.state).toEqual(before.state);
    expect(calls).toEqual({ prep: 1, read: 1, score: 1, accept: 1, publish: 1 });
    expect(after.trace.entries.filter((e) => e.reused).map((e) => e.node)).toEqual([
      'prep',
      'review/read',
      'review/score',
      'review/accept',
      'publish',
    ]);
  });
});
