import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { boundOf } from '../../src/cost/bound.js';
import { END, type GraphBuilder, graph, MemoryStore, run } from '../../src/index.js';

// The bound is a promise: whatever a run's nodes answer (which way a router goes, how many
// attempts fail, how many tokens each attempt reports, how long a map's list is), a run of a
// random graph never spends more than boundOf said, in total or at any node.

const State = z.object({
  n: z.number().default(0),
  items: z.array(z.number()).default([]),
  got: z.array(z.number()).default([]),
});
type S = z.output<typeof State>;

interface NodeSpec {
  readonly attempts: number;
  readonly maxTokens: number;
  /** Where its router may send the run: an earlier node (a loop, capped at it) or later. */
  readonly back: number | null;
  readonly visits: number;
}

interface Spec {
  readonly nodes: readonly NodeSpec[];
  readonly map: { readonly maxItems: number; readonly attempts: number } | null;
  /** Scripted outcomes, read in turn: a router's choice, a failure, a usage, a list length. */
  readonly script: readonly number[];
}

const specs: fc.Arbitrary<Spec> = fc.record({
  nodes: fc.array(
    fc.record({
      attempts: fc.integer({ min: 1, max: 3 }),
      maxTokens: fc.integer({ min: 1, max: 500 }),
      back: fc.option(fc.nat(5), { nil: null }),
      visits: fc.integer({ min: 1, max: 4 }),
    }),
    { minLength: 1, maxLength: 5 },
  ),
  map: fc.option(
    fc.record({
      maxItems: fc.integer({ min: 1, max: 4 }),
      attempts: fc.integer({ min: 1, max: 2 }),
    }),
    { nil: null },
  ),
  script: fc.array(fc.nat(1000), { minLength: 1, maxLength: 40 }),
});

function build(spec: Spec) {
  let at = 0;
  // Outcomes come from the script by a counter: the run's choices are the property's input.
  const next = () => spec.script[at++ % spec.script.length]!;
  const names = spec.nodes.map((_, i) => `n${i}`);
  // A node that is the target of a back route carries the cap that loop needs.
  const capped = new Map<number, number>();
  spec.nodes.forEach((node, i) => {
    if (node.back !== null) capped.set(node.back % (i + 1), node.visits);
  });
  let g = graph('random', { state: State }) as unknown as GraphBuilder<S, string>;
  spec.nodes.forEach((node, i) => {
    g = g.node(
      names[i]!,
      (s, ctx) => {
        if (next() % 6 === 0) throw new Error('scripted failure');
        ctx.usage({ inputTokens: next() % (node.maxTokens + 1), outputTokens: 0 });
        return { n: s.n + 1, items: Array.from({ length: next() % 6 }, (_, k) => k) };
      },
      {
        retry: { attempts: node.attempts, backoffMs: 0 },
        spend: { calls: 1, maxTokens: node.maxTokens },
        ...(capped.has(i) && { visits: capped.get(i)! }),
        writes: ['n', 'items'],
      },
    );
  });
  const last = spec.map ? 'list' : END;
  spec.nodes.forEach((node, i) => {
    const after = names[i + 1] ?? last;
    if (node.back === null) g = g.edge(names[i]!, after);
    else {
      const back = names[node.back % (i + 1)]!;
      const targets = [...new Set([back, after])];
      // Mostly back round the loop, so runs reach their caps; the script decides.
      g = g.route(
        names[i]!,
        () => (spec.script[at % spec.script.length]! % 5 === 0 ? after : back),
        targets,
      );
    }
  });
  if (spec.map) {
    g = g
      .node('list', () => ({}), { writes: [] })
      .node(
        'item',
        (_s, ctx) => {
          if (next() % 3 === 0) throw new Error('scripted failure');
          ctx.usage({ inputTokens: next() % 50, outputTokens: next() % 50 });
          return { got: [ctx.index ?? 0] };
        },
        {
          retry: { attempts: spec.map.attempts, backoffMs: 0 },
          spend: { calls: 1, maxTokens: 100 },
          writes: [],
        },
      )
      .node('collect', () => ({}), { join: { kind: 'all' }, writes: [] })
      .map('list', { over: 'items', branch: 'item', join: 'collect', maxItems: spec.map.maxItems })
      .edge('item', 'collect')
      .edge('collect', END);
  }
  return g.entry('n0').compile();
}

describe('the bound is never below what a run spends', () => {
  it('random graphs with random scripted outcomes stay within their bound', async () => {
    await fc.assert(
      fc.asyncProperty(specs, async (spec) => {
        const g = build(spec);
        const bound = boundOf(g);
        const result = await run(g, { n: 0, items: [], got: [] }, { store: new MemoryStore() });
        const entries = result.trace.entries;
        const tokens = entries.reduce(
          (sum, e) => sum + (e.usage ? e.usage.inputTokens + e.usage.outputTokens : 0),
          0,
        );
        expect(entries.length).toBeLessThanOrEqual(bound.total.attempts);
        expect(new Set(entries.map((e) => e.activation)).size).toBeLessThanOrEqual(
          bound.total.activations,
        );
        expect(tokens).toBeLessThanOrEqual(bound.total.tokens);
        for (const n of bound.nodes) {
          const own = entries.filter((e) => e.node === n.node);
          expect(own.length).toBeLessThanOrEqual(n.attempts);
          expect(new Set(own.map((e) => e.activation)).size).toBeLessThanOrEqual(n.activations);
        }
      }),
      { numRuns: 150, seed: 34 },
    );
  }, 60_000);
});
