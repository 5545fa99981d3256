import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  all,
  END,
  type GraphDef,
  graph,
  person,
  type RunOverlay,
  renderGraph,
  validate,
} from '../../src/index.js';
import { declare, pass, State } from './support.js';

/**
 * A review loop with every kind of link: draft -> split, a fan-out to two checks joined at
 * merge, a person who approves or sends the draft back (a route), and an effect that ends it.
 */
const review = graph('review', { state: State })
  .node('draft', pass, { visits: 3 })
  .node('split', pass)
  .node('facts', pass, { reads: ['topic'], writes: ['notes'] })
  .node('style', pass, { reads: ['topic'], writes: ['done'] })
  .node('merge', pass, { join: all() })
  .node('approve', person({ prompt: 'Publish?', answer: z.object({ done: z.boolean() }) }))
  .node('publish', pass, { kind: 'effect' })
  .edge('draft', 'split')
  .fanOut('split', ['facts', 'style'], 'merge')
  .edge('facts', 'merge')
  .edge('style', 'merge')
  .edge('merge', 'approve')
  .route('approve', (s) => (s.done ? 'publish' : 'draft'), ['publish', 'draft'])
  .edge('publish', END)
  .entry('draft')
  .toDef();

/** The first round was sent back by the person; the second waits for their answer. */
const waiting: RunOverlay = {
  counts: { draft: 2, split: 2, facts: 2, style: 2, merge: 2, approve: 1 },
  path: [
    ...['draft', 'split', 'facts', 'style', 'merge', 'approve'],
    ...['draft', 'split', 'style', 'facts', 'merge'],
  ],
  stoppedAt: ['approve'],
  status: 'waiting',
};

const linkLine = /^ {2}(\S+) (-->|-\.->|==>)(?:\|"([^"]*)"\|)? (\S+)$/;

/** The links a Mermaid text draws, in order, as `from -> to` with node labels for ids. */
function mermaidLinks(text: string): string[] {
  const labels = new Map<string, string>();
  for (const m of text.matchAll(/^ {2}(\S+?)\(?\["([^"]*)"\]\)?$/gm)) labels.set(m[1]!, m[2]!);
  const name = (id: string) => (labels.get(id) ?? id).split(' ')[0]!;
  return text.split('\n').flatMap((line) => {
    const m = linkLine.exec(line);
    return m ? [`${name(m[1]!)} -> ${name(m[4]!)}`] : [];
  });
}

/** The links a Mermaid `linkStyle` line marks, resolved through their index. */
function styledLinks(text: string): string[] {
  const indexes = /^ {2}linkStyle ([\d,]+) /m.exec(text)?.[1]?.split(',').map(Number) ?? [];
  const links = mermaidLinks(text);
  return indexes.map((i) => links[i] ?? `no link ${i}`);
}

describe('renderGraph as Mermaid', () => {
  it('draws one line per node and per link, in declaration order, from START to END', () => {
    expect(validate(review)).toEqual([]);

    expect(renderGraph(review)).toBe(`flowchart TD
  __start__(["START"])
  n0["draft (visits ≤ 3)"]
  n1["split"]
  n2["facts"]
  n3["style"]
  n4["merge (join: all)"]
  n5["approve (person)"]
  n6["publish (effect)"]
  __end__(["END"])
  __start__ --> n0
  n0 --> n1
  n1 ==>|"fan-out"| n2
  n1 ==>|"fan-out"| n3
  n2 ==>|"join"| n4
  n3 ==>|"join"| n4
  n4 --> n5
  n5 -.->|"route"| n6
  n5 -.->|"route"| n0
  n6 --> __end__
`);
  });

  it('draws a run over the graph: visited nodes with their counts, the stopped node, the links taken', () => {
    const text = renderGraph(review, { run: waiting });

    expect(text).toBe(`---
title: "review: waiting"
---
flowchart TD
  __start__(["START"])
  n0["draft ×2 (visits ≤ 3)"]
  n1["split ×2"]
  n2["facts ×2"]
  n3["style ×2"]
  n4["merge ×2 (join: all)"]
  n5["approve ×1 (person)"]
  n6["publish (effect)"]
  __end__(["END"])
  __start__ --> n0
  n0 --> n1
  n1 ==>|"fan-out"| n2
  n1 ==>|"fan-out"| n3
  n2 ==>|"join"| n4
  n3 ==>|"join"| n4
  n4 --> n5
  n5 -.->|"route"| n6
  n5 -.->|"route"| n0
  n6 --> __end__
  classDef visited fill:#dcfce7,stroke:#16a34a
  classDef stopped fill:#fee2e2,stroke:#dc2626,stroke-width:2px
  class n0,n1,n2,n3,n4 visited
  class n5 stopped
  linkStyle 0,1,2,3,4,5,6,8 stroke:#16a34a,stroke-width:3px
`);
    // The linkStyle indexes point at the links the run took, and at no other.
    expect(styledLinks(text)).toEqual([
      'START -> draft',
      'draft -> split',
      'split -> facts',
      'split -> style',
      'facts -> merge',
      'style -> merge',
      'merge -> approve',
      'approve -> draft',
    ]);
  });

  it('marks the way to END only when the run succeeded', () => {
    const path = ['draft', 'split', 'facts', 'style', 'merge', 'approve', 'publish'];
    const counts = Object.fromEntries(path.map((n) => [n, 1]));
    const done = renderGraph(review, { run: { counts, path, status: 'succeeded' } });
    const failed = renderGraph(review, {
      run: { counts, path, stoppedAt: ['publish'], status: 'failed' },
    });

    expect(styledLinks(done)).toContain('approve -> publish');
    expect(styledLinks(done)).toContain('publish -> END');
    expect(styledLinks(failed)).not.toContain('publish -> END');
    expect(failed).toContain('  class n6 stopped\n');
  });

  it('draws maps, onError links, terminal nodes and nodes a broken graph names but never declares', () => {
    const def = declare('audit')
      .node('list', pass)
      .node('check', pass, { onError: 'report' })
      .node('collect', pass, { join: all() })
      .node('report', pass, { terminal: true })
      .map('list', { over: 'notes', branch: 'check', join: 'collect' })
      .edge('check', 'collect')
      .edge('collect', 'report')
      .edge('report', 'nowhere' as never)
      .entry('list')
      .toDef();

    expect(mermaidLinks(renderGraph(def))).toEqual([
      'START -> list',
      'list -> check',
      'check -> collect',
      'check -> report',
      'collect -> report',
      'report -> nowhere',
      'report -> END',
    ]);
    const text = renderGraph(def);
    expect(text).toContain('  n0 ==>|"map over notes"| n1\n');
    expect(text).toContain('  n1 -.->|"onError"| n3\n');
    expect(text).toContain('  n4["nowhere (undeclared)"]\n');
  });

  it('prefers the normal link over the onError link to the same node when the path cannot tell', () => {
    const def = declare()
      .node('verify', pass, { onError: 'publish' })
      .node('publish', pass)
      .edge('verify', 'publish')
      .edge('publish', END)
      .entry('verify')
      .toDef();
    const run = { counts: {}, path: ['verify', 'publish'], status: 'succeeded' };

    expect(renderGraph(def, { run })).toContain('  linkStyle 0,1,3 ');
    expect(mermaidLinks(renderGraph(def))[2]).toBe('verify -> publish'); // the onError link
  });

  it('gives every node a safe id whatever its name, and escapes what would break a label', () => {
    const names = ['fact-check', 'two words', 'say "hi"', 'a\\b', 'x<y> & #1;', '`md`', 'toString'];
    const builder = declare();
    for (const name of names) builder.node(name, pass);
    const def: GraphDef = {
      ...builder.toDef(),
      entry: names[0]!,
      edges: names.map((from, i) => ({ from, to: names[i + 1] ?? END })),
    };
    expect(validate(def)).toEqual([]);

    const text = renderGraph(def, { run: { counts: {}, path: [] } });
    const lines = text.trimEnd().split('\n').slice(1);
    for (const line of lines) {
      expect(line).toMatch(
        /^ {2}((n\d+|__start__|__end__)(\["[^"]*"\]|\(\["[^"]*"\]\))|\S+ (-->|-\.->|==>)(\|"[^"]*"\|)? \S+|classDef .*)$/,
      );
    }
    expect(text).toContain('  n1["two words"]\n');
    expect(text).toContain('  n2["say #34;hi#34;"]\n');
    expect(text).toContain('  n3["a\\b"]\n');
    expect(text).toContain('  n4["x#60;y#62; #38; #35;1;"]\n');
    expect(text).toContain('  n5["#96;md#96;"]\n');
    // An empty `counts` object has no inherited counts: toString was not visited.
    expect(text).toContain('  n6["toString"]\n');
    expect(text).not.toContain('class ');

    const dot = renderGraph(def, { format: 'dot' });
    expect(dot).toContain('  "n2" [label="say \\"hi\\""];\n');
    expect(dot).toContain('  "n3" [label="a\\\\b"];\n');
    expect(dot).toContain('  "n4" [label="x<y> &amp; #1;"];\n');
  });
});

describe('renderGraph as DOT', () => {
  it('draws the same nodes and links for Graphviz', () => {
    expect(renderGraph(review, { format: 'dot' })).toBe(`digraph "review" {
  rankdir=TB;
  node [shape=box, style=rounded];
  "__start__" [label="START", shape=oval];
  "n0" [label="draft (visits ≤ 3)"];
  "n1" [label="split"];
  "n2" [label="facts"];
  "n3" [label="style"];
  "n4" [label="merge (join: all)"];
  "n5" [label="approve (person)"];
  "n6" [label="publish (effect)"];
  "__end__" [label="END", shape=oval];
  "__start__" -> "n0";
  "n0" -> "n1";
  "n1" -> "n2" [label="fan-out", style=bold];
  "n1" -> "n3" [label="fan-out", style=bold];
  "n2" -> "n4" [label="join", style=bold];
  "n3" -> "n4" [label="join", style=bold];
  "n4" -> "n5";
  "n5" -> "n6" [label="route", style=dashed];
  "n5" -> "n0" [label="route", style=dashed];
  "n6" -> "__end__";
}
`);
  });

  it('fills visited and stopped nodes and thickens the links the run took', () => {
    expect(renderGraph(review, { format: 'dot', run: waiting })).toBe(`digraph "review" {
  rankdir=TB;
  label="review: waiting";
  labelloc=t;
  node [shape=box, style=rounded];
  "__start__" [label="START", shape=oval];
  "n0" [label="draft ×2 (visits ≤ 3)", style="rounded,filled", fillcolor="#dcfce7", color="#16a34a"];
  "n1" [label="split ×2", style="rounded,filled", fillcolor="#dcfce7", color="#16a34a"];
  "n2" [label="facts ×2", style="rounded,filled", fillcolor="#dcfce7", color="#16a34a"];
  "n3" [label="style ×2", style="rounded,filled", fillcolor="#dcfce7", color="#16a34a"];
  "n4" [label="merge ×2 (join: all)", style="rounded,filled", fillcolor="#dcfce7", color="#16a34a"];
  "n5" [label="approve ×1 (person)", style="rounded,filled", fillcolor="#fee2e2", color="#dc2626", penwidth=2];
  "n6" [label="publish (effect)"];
  "__end__" [label="END", shape=oval];
  "__start__" -> "n0" [color="#16a34a", penwidth=3];
  "n0" -> "n1" [color="#16a34a", penwidth=3];
  "n1" -> "n2" [label="fan-out", style=bold, color="#16a34a", penwidth=3];
  "n1" -> "n3" [label="fan-out", style=bold, color="#16a34a", penwidth=3];
  "n2" -> "n4" [label="join", style=bold, color="#16a34a", penwidth=3];
  "n3" -> "n4" [label="join", style=bold, color="#16a34a", penwidth=3];
  "n4" -> "n5" [color="#16a34a", penwidth=3];
  "n5" -> "n6" [label="route", style=dashed];
  "n5" -> "n0" [label="route", style=dashed, color="#16a34a", penwidth=3];
  "n6" -> "__end__";
}
`);
  });

  it('escapes quotes and backslashes in the graph name', () => {
    const def = { ...review, name: 'say "hi" \\ bye' };
    expect(renderGraph(def, { format: 'dot' })).toMatch(/^digraph "say \\"hi\\" \\\\ bye" \{\n/);
  });
});

describe('a 200-node graph', () => {
  // A chain where every tenth node may route back five nodes (capped) or on, ending at END.
  const size = 200;
  const names = Array.from({ length: size }, (_, i) => `step-${i}`);
  const builder = declare('big');
  for (const [i, name] of names.entries())
    builder.node(name, pass, i % 10 === 5 ? { visits: 2 } : {});
  for (const [i, name] of names.entries()) {
    const next = names[i + 1] ?? END;
    if (i % 10 === 9)
      builder.route(name as never, () => next as never, [next, names[i - 4]!] as never);
    else builder.edge(name as never, next as never);
  }
  const def = builder.entry(names[0] as never).toDef();
  const links = [
    `START -> ${names[0]}`,
    ...names.flatMap((name, i) => {
      const next = names[i + 1] ?? 'END';
      return i % 10 === 9
        ? [`${name} -> ${next}`, `${name} -> ${names[i - 4]}`]
        : [`${name} -> ${next}`];
    }),
  ];

  it('is a valid graph', () => {
    expect(validate(def)).toEqual([]);
  });

  it('draws every node and every link exactly once in Mermaid', () => {
    const text = renderGraph(def);
    const labels = [...text.matchAll(/^ {2}n\d+\["([^"]*)"\]$/gm)].map((m) => m[1]!);
    for (const name of names) {
      expect(labels.filter((l) => l === name || l.startsWith(`${name} (`))).toHaveLength(1);
    }
    expect(mermaidLinks(text)).toEqual(links);
  });

  it('draws every node and every link exactly once in DOT', () => {
    const text = renderGraph(def, { format: 'dot' });
    const label = new Map(
      [...text.matchAll(/^ {2}"(\S+)" \[label="([^"]*)"/gm)].map((m) => [m[1]!, m[2]!]),
    );
    for (const name of names)
      expect(
        [...label.values()].filter((l) => l.startsWith(`${name} `) || l === name),
      ).toHaveLength(1);
    const drawn = [...text.matchAll(/^ {2}"(\S+)" -> "(\S+)"/gm)].map(
      (m) => `${label.get(m[1]!)!.split(' ')[0]} -> ${label.get(m[2]!)!.split(' ')[0]}`,
    );
    expect(drawn).toEqual(links);
  });
});
