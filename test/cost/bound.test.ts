import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { boundOf } from '../../src/cost/bound.js';
import { END, graph } from '../../src/index.js';

const State = z.object({
  n: z.number().default(0),
  items: z.array(z.string()).default([]),
  few: z.array(z.string()).max(5).default([]),
  out: z.array(z.string()).default([]),
});
const pass = () => ({});
const none = { writes: [] as const };
const spend = (maxTokens: number) => ({ calls: 1, maxTokens, maxCostUsd: maxTokens / 1000 });
const byNode = (b: ReturnType<typeof boundOf>) =>
  Object.fromEntries(b.nodes.map((n) => [n.node, n]));

describe('the worst case of a run, from its declaration', () => {
  it('a capped loop runs its cap, and every visit spends every retry', () => {
    const g = graph('loop', { state: State })
      .node('plan', pass)
      .node('write', pass, {
        kind: 'model',
        visits: 3,
        retry: { attempts: 2 },
        spend: spend(100),
      })
      .node('publish', pass, { terminal: true })
      .edge('plan', 'write')
      .route('write', () => 'write', ['write', 'publish'])
      .entry('plan')
      .compile();
    const b = boundOf(g);
    const nodes = byNode(b);
    expect(nodes.write).toMatchObject({ activations: 3, attempts: 6, modelCalls: 6, tokens: 600 });
    expect(nodes.publish).toMatchObject({ activations: 1, attempts: 1, tokens: 0 });
    expect(b.total).toMatchObject({ activations: 5, attempts: 8, modelCalls: 6, tokens: 600 });
    expect(b.total.costUsd).toBeCloseTo(0.6);
    expect(b.path).toEqual([
      { node: 'plan', activations: 1 },
      { node: 'write', activations: 3 },
      { node: 'publish', activations: 1 },
    ]);
    expect(b.unbounded).toEqual([]);
  });

  it('a loop of two nodes: the uncapped one runs as often as the capped one hands it the run', () => {
    const g = graph('pair', { state: State })
      .node('draft', pass, { kind: 'model', visits: 4, spend: spend(10) })
      .node('check', pass, { kind: 'model', retry: { attempts: 2 }, spend: spend(5) })
      .node('done', pass, { terminal: true })
      .edge('draft', 'check')
      .route('check', () => 'draft', ['draft', 'done'])
      .entry('draft')
      .compile();
    const nodes = byNode(boundOf(g));
    expect(nodes.draft!.activations).toBe(4);
    expect(nodes.check).toMatchObject({ activations: 4, attempts: 8, tokens: 40 });
    expect(nodes.done!.activations).toBe(1);
    expect(boundOf(g).total.tokens).toBe(80);
  });

  it('a router picks one way: the total is the costlier way, not both', () => {
    const g = graph('fork', { state: State })
      .node('pick', pass)
      .node('big', pass, { kind: 'model', spend: spend(100) })
      .node('small', pass, { kind: 'model', spend: spend(10) })
      .node('end', pass)
      .route('pick', () => 'big', ['big', 'small'])
      .edge('big', 'end')
      .edge('small', 'end')
      .edge('end', END)
      .entry('pick')
      .compile();
    const b = boundOf(g);
    expect(b.total).toMatchObject({ activations: 3, tokens: 100 });
    expect(b.path.map((s) => s.node)).toEqual(['pick', 'big', 'end']);
    expect(byNode(b).small!.tokens).toBe(10);
  });

  it('a retried fan-out spends every branch with every retry, and its join runs once', () => {
    const g = graph('fan', { state: State })
      .node('split', pass)
      .node('x', pass, { ...none, kind: 'model', retry: { attempts: 3 }, spend: spend(50) })
      .node('y', pass, { ...none, kind: 'model', retry: { attempts: 2 }, spend: spend(20) })
      .node('merge', pass, { join: { kind: 'all' } })
      .fanOut('split', ['x', 'y'], 'merge')
      .edge('x', 'merge')
      .edge('y', 'merge')
      .edge('merge', END)
      .entry('split')
      .compile();
    const b = boundOf(g);
    expect(byNode(b).merge!.activations).toBe(1);
    expect(b.total).toMatchObject({ activations: 4, attempts: 7, modelCalls: 5, tokens: 190 });
  });

  it('a map opens maxItems branches, else its list schema .max(), else it is unbounded, named', () => {
    const mapped = (name: string, over: 'items' | 'few', maxItems?: number) =>
      graph(name, { state: State })
        .node('list', pass)
        .node('audit', pass, { ...none, kind: 'model', retry: { attempts: 2 }, spend: spend(10) })
        .node('collect', pass, { join: { kind: 'all' } })
        .map('list', { over, branch: 'audit', join: 'collect', ...(maxItems && { maxItems }) })
        .edge('audit', 'collect')
        .edge('collect', END)
        .entry('list')
        .compile();
    expect(boundOf(mapped('declared', 'items', 4)).total.tokens).toBe(80);
    expect(boundOf(mapped('schema', 'few')).total.tokens).toBe(100);
    const open = boundOf(mapped('open', 'items'));
    expect(open.total.tokens).toBe(Infinity);
    expect(open.unbounded).toEqual([
      {
        node: 'list',
        what: 'activations',
        reason: 'the map over "items" declares no maxItems and the field\'s schema has no .max()',
      },
    ]);
  });

  it('a subgraph in a map counts its child per branch, its caps per entry', () => {
    const Child = z.object({ n: z.number().default(0) });
    const child = graph('review', { state: Child })
      .node('read', pass, { kind: 'model', visits: 2, spend: spend(7) })
      .route('read', () => END, ['read', END])
      .entry('read')
      .compile();
    const g = graph('parent', { state: State })
      .node('list', pass)
      .subgraph('review', child, { input: {}, output: {}, writes: [] })
      .node('collect', pass, { join: { kind: 'all' } })
      .map('list', { over: 'items', branch: 'review', join: 'collect', maxItems: 3 })
      .edge('review', 'collect')
      .edge('collect', END)
      .entry('list')
      .compile();
    const b = boundOf(g);
    expect(byNode(b)['review/read']).toMatchObject({ activations: 6, tokens: 42 });
    expect(b.total.tokens).toBe(42);
    expect(b.total.modelCalls).toBe(6);
  });

  it('a model node without maxTokens is unbounded in tokens and cost, with the reason', () => {
    const g = graph('open', { state: State })
      .node('ask', pass, { kind: 'model', spend: { calls: 3 } })
      .edge('ask', END)
      .entry('ask')
      .compile();
    const b = boundOf(g);
    expect(b.total.modelCalls).toBe(3);
    expect(b.total.tokens).toBe(Infinity);
    expect(b.unbounded.map((u) => u.what)).toEqual(['tokens', 'costUsd']);
  });
});
