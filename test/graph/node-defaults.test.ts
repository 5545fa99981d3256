// Graph-wide node defaults (LangGraph.js: a retry policy set on the graph rather than on each
// node): `nodeDefaults` gives every node the options it does not set itself. See
// docs/semantics.md, "Node defaults".
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { END, graph, person, run } from '../../src/index.js';
import { manualClock } from '../support/clock.js';

const State = z.object({
  tries: z.number().default(0),
  done: z.boolean().default(false),
  approved: z.boolean().default(false),
});

const nodeOf = (g: { def: { nodes: readonly { name: string }[] } }, name: string) =>
  g.def.nodes.find((n) => n.name === name) as Record<string, unknown> | undefined;

describe('nodeDefaults: options set once for every node', () => {
  it('a retry policy on the graph retries every node that runs attempts, as a node of its own would', async () => {
    // Ported from LangGraph.js's "retry policy on the graph applies to nodes without their own".
    let calls = 0;
    const g = graph('flaky', {
      state: State,
      nodeDefaults: { retry: { attempts: 3, backoffMs: 10 } },
    })
      .node('call', () => {
        calls++;
        if (calls < 3) throw new Error('the API hiccuped');
        return { done: true };
      })
      .edge('call', END)
      .entry('call')
      .compile();

    const result = await run(g, {}, { clock: manualClock() });

    expect(result.status).toBe('succeeded');
    expect(calls).toBe(3);
    expect(nodeOf(g, 'call')?.retry).toEqual({ attempts: 3, backoffMs: 10 });
  });

  it("a node's own option replaces the default whole, not field by field", async () => {
    let calls = 0;
    const g = graph('own', {
      state: State,
      nodeDefaults: { retry: { attempts: 5, backoffMs: 10 } },
    })
      .node(
        'call',
        () => {
          calls++;
          throw new Error('down');
        },
        { retry: { attempts: 2 } },
      )
      .edge('call', END)
      .entry('call')
      .compile();

    const result = await run(g, {}, { clock: manualClock() });

    expect(result.status).toBe('failed');
    expect(calls).toBe(2);
    expect(nodeOf(g, 'call')?.retry).toEqual({ attempts: 2 });
  });

  it('a default timeout stops an attempt that runs too long, with NODE_TIMEOUT', async () => {
    const g = graph('slow', { state: State, nodeDefaults: { timeoutMs: 20 } })
      .node(
        'fetch',
        (_s, ctx) =>
          new Promise<{ done: boolean }>((resolve) => {
            ctx.signal.addEventListener('abort', () => resolve({ done: true }));
          }),
      )
      .edge('fetch', END)
      .entry('fetch')
      .compile();

    const result = await run(g, {});

    expect(result.status === 'failed' && result.error).toMatchObject({
      node: 'fetch',
      code: 'NODE_TIMEOUT',
    });
  });

  it('a default visit cap bounds every cycle, so a loop needs no cap of its own to validate', async () => {
    const loop = (nodeDefaults?: { visits: number }) =>
      graph('loop', { state: State, ...(nodeDefaults && { nodeDefaults }) })
        .node('try', (s) => ({ tries: s.tries + 1 }))
        .route('try', (s) => (s.tries >= 10 ? END : 'try'), ['try', END])
        .entry('try');

    expect(
      loop()
        .validate()
        .map((d) => d.code),
    ).toEqual(['CYCLE_UNCAPPED']);
    expect(loop({ visits: 4 }).validate()).toEqual([]);

    const result = await run(loop({ visits: 4 }).compile(), {});

    expect(result.status === 'failed' && result.error.code).toBe('VISIT_CAP');
    expect(result.state.tries).toBe(4);
  });

  it('retry, timeoutMs and exec go to nodes that run attempts only; visits to every node', () => {
    const g = graph('mixed', {
      state: State,
      nodeDefaults: { retry: { attempts: 3 }, timeoutMs: 1_000, visits: 9, exec: ['git'] },
    })
      .node('work', () => ({ done: true }))
      .node(
        'review',
        person({
          prompt: () => 'Publish?',
          answer: z.object({ approved: z.boolean() }),
        }),
      )
      .node('send', () => ({}), { kind: 'effect', terminal: true })
      .edge('work', 'review')
      .edge('review', 'send')
      .entry('work')
      .compile();

    for (const name of ['work', 'send']) {
      expect(nodeOf(g, name)).toMatchObject({
        retry: { attempts: 3 },
        timeoutMs: 1_000,
        visits: 9,
        exec: ['git'],
      });
    }
    const review = nodeOf(g, 'review')!;
    expect(review.visits).toBe(9);
    expect(review).not.toHaveProperty('retry');
    expect(review).not.toHaveProperty('timeoutMs');
    expect(review).not.toHaveProperty('exec');
  });

  it('a default out of range is reported at every node it reaches, as its own option would be', () => {
    const builder = graph('bad', { state: State, nodeDefaults: { retry: { attempts: 0 } } })
      .node('a', () => ({}))
      .node('b', () => ({}))
      .edge('a', 'b')
      .edge('b', END)
      .entry('a');

    const diagnostics = builder.validate();

    expect(diagnostics.map((d) => [d.code, d.node])).toEqual([
      ['OPTION_INVALID', 'a'],
      ['OPTION_INVALID', 'b'],
    ]);
  });

  it('the defaults are part of the graph: changing one changes its hash', () => {
    const declare = (attempts: number) =>
      graph('h', { state: State, nodeDefaults: { retry: { attempts } } })
        .node('a', () => ({}))
        .edge('a', END)
        .entry('a')
        .compile();

    expect(declare(2).hash).not.toBe(declare(3).hash);
    expect(declare(2).hash).toBe(declare(2).hash);
  });
});
