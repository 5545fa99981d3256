import { describe, expect, it } from 'vitest';
import { append, END, graph } from '../../src/index.js';
import { declare, pass, State } from './support.js';

// Sound graphs: no diagnostic at all, and compile() returns a graph. Each shape here is one a
// careless validator could flag by mistake.

describe('sound graphs compile with no diagnostics', () => {
  it('a chain that ends at END', () => {
    const builder = declare()
      .node('plan', pass)
      .node('search', pass)
      .node('publish', pass)
      .edge('plan', 'search')
      .edge('search', 'publish')
      .edge('publish', END)
      .entry('plan');

    expect(builder.validate()).toEqual([]);
    expect(builder.compile().nodes.size).toBe(3);
  });

  it('a routed loop with a visit cap and a route to END', () => {
    const builder = declare()
      .node('plan', pass, { visits: 3 })
      .node('search', pass)
      .edge('plan', 'search')
      .route('search', (s) => (s.done ? END : 'plan'), ['plan', END])
      .entry('plan');

    expect(builder.validate()).toEqual([]);
    expect(() => builder.compile()).not.toThrow();
  });

  it('a node that routes to itself with a visit cap', () => {
    const builder = declare()
      .node('poll', pass, { visits: 10 })
      .route('poll', (s) => (s.done ? END : 'poll'), ['poll', END])
      .entry('poll');

    expect(builder.validate()).toEqual([]);
  });

  it('a node declared terminal needs no edge: terminal: true counts as a way out', () => {
    const builder = declare()
      .node('check', pass)
      .node('accept', pass, { terminal: true })
      .node('reject', pass, { terminal: true })
      .route('check', (s) => (s.done ? 'accept' : 'reject'), ['accept', 'reject'])
      .entry('check');

    expect(builder.validate()).toEqual([]);
    expect(builder.compile().nodes.get('accept')?.next).toBe(END);
  });

  it('a capped loop whose only way out is a terminal node is not a trap', () => {
    const builder = declare()
      .node('draft', pass, { visits: 3 })
      .node('review', pass)
      .node('done', pass, { terminal: true })
      .edge('draft', 'review')
      .route('review', (s) => (s.done ? 'done' : 'draft'), ['draft', 'done'])
      .entry('draft');

    expect(builder.validate()).toEqual([]);
  });

  it('a node reached only through an onError route is reachable', () => {
    const builder = declare()
      .node('call', pass, { onError: 'fallback', retry: { attempts: 3 } })
      .node('fallback', pass)
      .edge('call', END)
      .edge('fallback', END)
      .entry('call');

    expect(builder.validate()).toEqual([]);
    expect(builder.compile().nodes.get('call')?.def.onError).toBe('fallback');
  });

  it('an onError route back into a capped loop', () => {
    const builder = declare()
      .node('plan', pass, { visits: 3 })
      .node('act', pass, { onError: 'plan' })
      .edge('plan', 'act')
      .route('act', (s) => (s.done ? END : 'plan'), ['plan', END])
      .entry('plan');

    expect(builder.validate()).toEqual([]);
  });

  it('a router may list END among its targets and a static edge may point at END', () => {
    const builder = declare()
      .node('a', pass)
      .node('b', pass)
      .route('a', (s) => (s.done ? END : 'b'), [END, 'b'])
      .edge('b', END)
      .entry('a');

    expect(builder.validate()).toEqual([]);
  });

  it('reads, writes and reducers that name real state fields', () => {
    const builder = graph('g', { state: State, reducers: { notes: append } })
      .node('a', pass, { reads: ['topic'], writes: ['notes', 'done'] })
      .edge('a', END)
      .entry('a');

    expect(builder.validate()).toEqual([]);
  });
});
