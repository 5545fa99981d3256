import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { append, END, graph, person } from '../../src/index.js';

const State = z.object({
  topic: z.string(),
  notes: z.array(z.string()).default([]),
  connection: z.string().nullable().default(null),
  cache: z.record(z.string(), z.string()).default({}),
});
const work = () => undefined;
const codes = (b: { validate(): { code: string; node?: string }[] }) =>
  b.validate().map((d) => (d.node === undefined ? d.code : `${d.code} at ${d.node}`));

describe('declaring untracked fields', () => {
  it('a graph lists top-level fields with a default as untracked, and compiles', () => {
    const b = graph('g', { state: State, untracked: ['connection', 'cache'] })
      .node('a', work)
      .edge('a', END)
      .entry('a');

    expect(b.validate()).toEqual([]);
    const g = b.compile();
    expect(g.def.untracked).toEqual(['connection', 'cache']);
    expect([...g.untracked!.fields]).toEqual(['connection', 'cache']);
    expect(g.untracked!.defaults()).toEqual({ connection: null, cache: {} });
  });

  it('a graph without untracked fields has no untracked table and the same hash as before', () => {
    const plain = graph('g', { state: State }).node('a', work).edge('a', END).entry('a').compile();
    const none = graph('g', { state: State, untracked: [] })
      .node('a', work)
      .edge('a', END)
      .entry('a')
      .compile();
    const some = graph('g', { state: State, untracked: ['cache'] })
      .node('a', work)
      .edge('a', END)
      .entry('a')
      .compile();

    expect(plain.untracked).toBeUndefined();
    expect(none.untracked).toBeUndefined();
    expect('untracked' in plain.def).toBe(false);
    expect(some.hash).not.toBe(plain.hash);
  });

  it('an untracked z.unknown() needs .optional(): a state key of it is required', () => {
    const Loose = State.extend({ client: z.unknown(), handle: z.unknown().optional() });
    const b = graph('g', { state: Loose, untracked: ['client', 'handle'] })
      .node('a', work)
      .edge('a', END)
      .entry('a');

    expect(b.validate().map((d) => d.message)).toEqual([
      expect.stringContaining('"client" has no default'),
    ]);
  });

  it('a field that is not in the schema, listed twice, or without a default is UNTRACKED_INVALID', () => {
    const b = graph('g', {
      state: State,
      untracked: ['conection', 'cache', 'cache', 'topic'] as never,
    })
      .node('a', work)
      .edge('a', END)
      .entry('a');

    const found = b.validate();
    expect(found.map((d) => d.code)).toEqual([
      'UNTRACKED_INVALID',
      'UNTRACKED_INVALID',
      'UNTRACKED_INVALID',
    ]);
    expect(found.map((d) => d.message)).toEqual([
      expect.stringContaining('"conection" is not a field of the state schema'),
      expect.stringContaining('"cache" is listed more than once'),
      expect.stringContaining('"topic" has no default'),
    ]);
    expect(() => b.compile()).toThrow(/UNTRACKED_INVALID/);
  });

  it('a field with a reducer, a map over it, or a person answering into it is UNTRACKED_INVALID', () => {
    const Listy = State.extend({ items: z.array(z.string()).default([]) });
    const b = graph('g', {
      state: Listy,
      reducers: { notes: append },
      untracked: ['notes', 'items'],
    })
      .node(
        'ask',
        person({
          prompt: 'items?',
          answer: z.array(z.string()),
          update: (items) => ({ items }),
        }),
        {
          writes: ['items'],
        },
      )
      .node('each', work)
      .node('join', work)
      .edge('ask', 'each')
      .map('each' as never, { over: 'items', branch: 'join', join: 'join' } as never)
      .edge('join', END)
      .entry('ask');

    const found = b.validate().filter((d) => d.code === 'UNTRACKED_INVALID');
    expect(found.map((d) => d.message)).toEqual([
      expect.stringContaining('"notes" has the reducer "append"'),
      expect.stringContaining('"items" is what the map at "each" runs over'),
      expect.stringContaining('"items" is written by person node "ask"'),
    ]);
  });

  it('a subgraph that declares untracked fields, or is handed one, is UNTRACKED_INVALID', () => {
    const child = graph('child', { state: State, untracked: ['cache'] })
      .node('c', work)
      .edge('c', END)
      .entry('c')
      .compile();
    const b = graph('g', { state: State, untracked: ['connection'] })
      .subgraph('sub', child, { input: { topic: 'topic', connection: 'connection' } })
      .edge('sub', END)
      .entry('sub');

    expect(codes(b)).toEqual(['UNTRACKED_INVALID at sub', 'UNTRACKED_INVALID']);
    expect(b.validate()[1]!.message).toContain('"connection" is handed to subgraph "sub"');
  });
});

describe('UNTRACKED_ACROSS_WAIT', () => {
  const approve = person({ prompt: 'go on?', answer: z.boolean() });

  it('warns on a node reading an untracked field written before a person wait', () => {
    const b = graph('g', { state: State, untracked: ['connection'] })
      .node('open', work, { reads: [], writes: ['connection'] })
      .node('approve', approve)
      .node('query', work, { reads: ['connection'], writes: ['notes'] })
      .edge('open', 'approve')
      .edge('approve', 'query')
      .edge('query', END)
      .entry('open');

    const found = b.validate();
    expect(found).toEqual([
      expect.objectContaining({
        code: 'UNTRACKED_ACROSS_WAIT',
        severity: 'warning',
        node: 'query',
        message: expect.stringContaining('"query" reads untracked field "connection"'),
      }),
    ]);
    // A warning: the graph still compiles.
    expect(() => b.compile()).not.toThrow();
  });

  it('does not warn when the read comes before the wait, or the field is set again after it', () => {
    const b = graph('g', { state: State, untracked: ['connection'] })
      .node('open', work, { reads: [], writes: ['connection'] })
      .node('query', work, { reads: ['connection'], writes: ['notes'] })
      .node('approve', approve)
      .node('reopen', work, { reads: [], writes: ['connection'] })
      .node('again', work, { reads: ['connection'], writes: ['notes'] })
      .edge('open', 'query')
      .edge('query', 'approve')
      .edge('approve', 'reopen')
      .edge('reopen', 'again')
      .edge('again', END)
      .entry('open');

    expect(b.validate()).toEqual([]);
  });

  it('warns on a loop that writes, waits and comes back to read', () => {
    const b = graph('g', { state: State, untracked: ['cache'] })
      .node('work', work, { reads: ['cache'], writes: ['cache'], visits: 3 })
      .node('approve', approve)
      .edge('work', 'approve')
      .route('approve', () => END, ['work', END])
      .entry('work');

    expect(codes(b)).toEqual(['UNTRACKED_ACROSS_WAIT at work']);
  });

  it('counts a subgraph with a person node inside as a stop point', () => {
    const child = graph('child', { state: State })
      .node('ask', approve)
      .edge('ask', END)
      .entry('ask')
      .compile();
    const b = graph('g', { state: State, untracked: ['connection'] })
      .node('open', work, { reads: [], writes: ['connection'] })
      .subgraph('review', child, { input: { topic: 'topic' }, output: {} })
      .node('query', work, { reads: ['connection'], writes: ['notes'] })
      .edge('open', 'review')
      .edge('review', 'query')
      .edge('query', END)
      .entry('open');

    expect(codes(b)).toEqual(['UNTRACKED_ACROSS_WAIT at query']);
  });
});
