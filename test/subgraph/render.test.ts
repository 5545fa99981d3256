import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  append,
  END,
  graph,
  nestTrace,
  renderGraph,
  run,
  type TraceNode,
} from '../../src/index.js';
import { expectExit, root, sandbox, testTimeoutMs } from '../cli/support.js';
import { postGraph, reviewGraph } from './fixtures.js';

describe('drawing a graph with a subgraph', () => {
  it('draws the child as a block named by its path, entered at its node and left from its END', async () => {
    const g = postGraph();
    const result = await run(g, { text: 'a b c' });

    expect(
      renderGraph(g.def, { run: { counts: {}, path: result.trace.path, status: 'succeeded' } }),
    ).toBe(`---
title: "post: succeeded"
---
flowchart TD
  __start__(["START"])
  n0["prep ×1"]
  subgraph sub0["review"]
    n1["review ×1 (subgraph)"]
    n2["read ×1"]
    n3["score ×1"]
    n4["accept ×1"]
    n5["reject"]
    n6(["END ×1"])
  end
  n7["publish ×1"]
  __end__(["END"])
  __start__ --> n0
  n0 --> n1
  n1 --> n2
  n2 --> n3
  n3 -.->|"route"| n4
  n3 -.->|"route"| n5
  n4 --> n6
  n5 --> n6
  n6 --> n7
  n7 --> __end__
  classDef visited fill:#dcfce7,stroke:#16a34a
  classDef stopped fill:#fee2e2,stroke:#dc2626,stroke-width:2px
  class n0,n1,n2,n3,n4,n6,n7 visited
  linkStyle 0,1,2,3,4,6,8,9 stroke:#16a34a,stroke-width:3px
`);
  });

  it('nests a subgraph inside a subgraph as a cluster inside a cluster, in DOT too', () => {
    const State = z.object({ text: z.string(), verdict: z.string().default('') });
    const middle = graph('middle', { state: State })
      .subgraph('inner', reviewGraph(), {
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

    const dot = renderGraph(outer.def, { format: 'dot' });

    expect(dot).toContain(`  subgraph "cluster_sub0" {
    label="mid";
    "n0" [label="mid (subgraph)"];
    subgraph "cluster_sub1" {
      label="mid/inner";
      "n1" [label="inner (subgraph)"];
      "n2" [label="read"];`);
    expect(dot).toContain(`      "n6" [label="END", shape=oval];
    }
    "n7" [label="END", shape=oval];
  }
  "__end__" [label="END", shape=oval];`);
    expect(dot).toContain('"n6" -> "n7";');
    expect(dot).toContain('"n7" -> "__end__";');
  });
});

describe('the trace of a run with a subgraph', () => {
  const shape = (nodes: readonly TraceNode[]): unknown[] =>
    nodes.map((n) => (n.kind === 'attempt' ? n.entry.node : [n.activation, shape(n.children)]));

  it('nests the child entries under the step that entered the child', async () => {
    const result = await run(postGraph(), { text: 'a b c' });

    expect(shape(nestTrace(result.trace.entries))).toEqual([
      'prep',
      ['review:1', ['review/read', 'review/score', 'review/accept']],
      'publish',
    ]);
  });

  it('nests each item of a map under its own entry of the subgraph', async () => {
    const State = z.object({ items: z.array(z.string()), out: z.array(z.string()).default([]) });
    const g = graph('many', { state: State, reducers: { out: append } })
      .node('start', () => undefined, { reads: [], writes: [] })
      .subgraph('review', reviewGraph(), {
        input: () => ({ draft: 'x y z' }),
        output: (o) => ({ out: [o.verdict] }),
        reads: [],
        writes: ['out'],
      })
      .node('end', () => undefined, { reads: [], writes: [] })
      .map('start', { over: 'items', branch: 'review', join: 'end' })
      .edge('review', 'end')
      .edge('end', END)
      .entry('start')
      .compile();

    const result = await run(g, { items: ['a', 'b'] });
    const inner = ['review/read', 'review/score', 'review/accept'];

    expect(shape(nestTrace(result.trace.entries))).toEqual([
      'start',
      ['start:1[0]/review:1', inner],
      ['start:1[1]/review:1', inner],
      'end',
    ]);
  });

  it('`waymark trace` shows the nesting', { timeout: testTimeoutMs }, async () => {
    const box = sandbox();
    const file = join(root, 'test/subgraph/cli-graph.ts');
    expectExit(
      await box.waymark(['run', file, '--input', '{"text":"a b c"}', '--run-id', 't-1']),
      0,
    );

    const out = await box.waymark(['trace', 't-1']);

    expectExit(out, 0);
    const steps = out.stdout
      .split('\n')
      .filter((l) => /^\S+Z {2}/.test(l))
      .map((l) => l.replace(/^\S+Z {2}/, '').replace(/ \d+ ms$/, ''));
    expect(steps).toEqual([
      '✓ prep:1',
      '  ✓ review/read:1',
      '  ✓ review/score:1',
      '  ✓ review/accept:1',
      '✓ publish:1',
    ]);
    expect(out.stdout).toMatch(/^ {26}▸ review:1 \(subgraph review\)$/m);
  });
});
