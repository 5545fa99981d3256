import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { END, graph, mergeByKey, validate } from '../../src/index.js';
import { pass } from './support.js';

const State = z.object({
  topic: z.string(),
  findings: z.array(z.object({ id: z.string(), text: z.string() })).default([]),
  done: z.boolean().default(false),
});

/** A graph that uses every kind of declaration: options, a router, onError, a reducer. */
const research = () =>
  graph('research', { state: State, version: 2, reducers: { findings: mergeByKey('id') } })
    .node('plan', pass, { visits: 3, reads: ['topic'] })
    .node('search', pass, {
      kind: 'effect',
      retry: { attempts: 3, backoffMs: 100, factor: 2 },
      timeoutMs: 5_000,
      onError: 'recover',
      writes: ['findings'],
    })
    .node('recover', pass)
    .node('publish', pass, { terminal: true, version: 4 })
    .edge('plan', 'search')
    .route('search', (s) => (s.done ? 'publish' : 'plan'), ['plan', 'publish'])
    .edge('recover', END)
    .entry('plan');

describe('the compiled graph', () => {
  it('its def is plain data: a JSON round trip gives back exactly the same value', () => {
    const g = research().compile();

    expect(JSON.parse(JSON.stringify(g.def))).toStrictEqual(g.def);
    expect(g.def.reducers).toEqual({ findings: 'mergeByKey(id)' });
    expect(g.def.routes).toEqual([{ from: 'search', targets: ['plan', 'publish'] }]);
  });

  it('its def validates on its own, without the builder', () => {
    const g = research().compile();

    expect(validate(JSON.parse(JSON.stringify(g.def)))).toEqual([]);
  });

  it('its hash does not depend on the order nodes, edges and route targets are declared in', () => {
    const reordered = graph('research', {
      state: State,
      version: 2,
      reducers: { findings: mergeByKey('id') },
    })
      .node('publish', pass, { terminal: true, version: 4 })
      .node('recover', pass)
      .node('search', pass, {
        onError: 'recover',
        writes: ['findings'],
        timeoutMs: 5_000,
        retry: { attempts: 3, backoffMs: 100, factor: 2 },
        kind: 'effect',
      })
      .node('plan', pass, { reads: ['topic'], visits: 3 })
      .edge('recover', END)
      .route('search', (s) => (s.done ? 'publish' : 'plan'), ['publish', 'plan'])
      .edge('plan', 'search')
      .entry('plan');

    expect(reordered.compile().hash).toBe(research().compile().hash);
  });

  it('its hash changes when an edge points somewhere else', () => {
    // The same three nodes, visited a -> b -> c in one and a -> c -> b in the other.
    const abc = graph('g', { state: State })
      .node('a', pass)
      .node('b', pass)
      .node('c', pass)
      .edge('a', 'b')
      .edge('b', 'c')
      .edge('c', END)
      .entry('a');
    const acb = graph('g', { state: State })
      .node('a', pass)
      .node('b', pass)
      .node('c', pass)
      .edge('a', 'c')
      .edge('c', 'b')
      .edge('b', END)
      .entry('a');

    const hash = abc.compile().hash;

    expect(hash).toMatch(/^[0-9a-f]{64}$/);
    expect(abc.compile().hash).toBe(hash);
    expect(acb.compile().hash).not.toBe(hash);
  });

  it('its hash changes when a router gains a target, or a node option changes', () => {
    const base = research().compile().hash;
    const moreTargets = graph('research', {
      state: State,
      version: 2,
      reducers: { findings: mergeByKey('id') },
    })
      .node('plan', pass, { visits: 3, reads: ['topic'] })
      .node('search', pass, {
        kind: 'effect',
        retry: { attempts: 3, backoffMs: 100, factor: 2 },
        timeoutMs: 5_000,
        onError: 'recover',
        writes: ['findings'],
      })
      .node('recover', pass)
      .node('publish', pass, { terminal: true, version: 4 })
      .edge('plan', 'search')
      .route('search', (s) => (s.done ? 'publish' : 'plan'), ['plan', 'publish', END])
      .edge('recover', END)
      .entry('plan');

    expect(moreTargets.compile().hash).not.toBe(base);
  });

  it('using the builder again after compile() does not change the compiled graph', () => {
    const builder = graph('g', { state: State })
      .node('a', pass)
      .node('b', pass)
      .edge('a', 'b')
      .edge('b', END)
      .entry('a');
    const g = builder.compile();
    const before = structuredClone(g.def);

    const changed = builder
      .node('c', pass)
      .route('c', () => END, [END])
      .edge('a', 'c')
      .entry('c')
      .toDef();

    expect(changed.nodes).toHaveLength(3); // the builder did change...
    expect(g.def).toStrictEqual(before); // ...and the compiled graph did not
    expect(g.nodes.has('c')).toBe(false);
    expect(g.entry).toBe('a');
  });

  it('editing the options object after compile() does not change the compiled graph', () => {
    const retry = { attempts: 3, backoffMs: 100, retryOn: ['transient' as const] };
    const writes = ['findings' as const];
    const g = graph('g', { state: State })
      .node('a', pass, { retry, writes })
      .edge('a', END)
      .entry('a')
      .compile();
    const before = structuredClone(g.def);
    retry.attempts = 0;
    retry.retryOn.push('transient');
    writes.pop();
    expect(g.def).toStrictEqual(before);
    expect(g.nodes.get('a')?.def.retry?.attempts).toBe(3);
  });

  it('its hash does not depend on the key order inside a retry policy', () => {
    const withRetry = (retry: { attempts: number; backoffMs: number }) =>
      graph('g', { state: State }).node('a', pass, { retry }).edge('a', END).entry('a').compile()
        .hash;
    expect(withRetry({ attempts: 3, backoffMs: 100 })).toBe(
      withRetry({ backoffMs: 100, attempts: 3 } as never),
    );
  });
});
