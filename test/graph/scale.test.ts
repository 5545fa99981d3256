import { describe, expect, it } from 'vitest';
import { END, type GraphBuilder } from '../../src/index.js';
import { declare, lines, pass } from './support.js';

// Stack safety only: how fast the validator is, is measured by the benchmarks, never here.
const size = 10_000;
const name = (i: number) => `n${i}`;

/** A builder whose node names are plain strings, for graphs declared in a loop. */
const loose = () => declare('large') as unknown as GraphBuilder<Record<string, unknown>, string>;

/** n0 -> n1 -> ... -> n9999 with a visit cap on n0 only; `last` declares n9999's exit. */
function chain(last: (builder: GraphBuilder<Record<string, unknown>, string>) => void) {
  const builder = loose();
  for (let i = 0; i < size; i++) builder.node(name(i), pass, i === 0 ? { visits: 2 } : {});
  for (let i = 0; i + 1 < size; i++) builder.edge(name(i), name(i + 1));
  last(builder);
  return builder.entry(name(0));
}

describe('large graphs', () => {
  it('a 10,000-node chain validates and compiles without overflowing the stack', () => {
    const builder = chain((b) => b.edge(name(size - 1), END));

    expect(builder.validate()).toEqual([]);
    expect(builder.compile().nodes.size).toBe(size);
  });

  it('a 10,000-node cycle with one capped node validates and compiles without overflowing the stack', () => {
    const builder = chain((b) => b.route(name(size - 1), () => END, [name(0), END]));

    expect(builder.validate()).toEqual([]);
    expect(builder.compile().nodes.size).toBe(size);
  });

  it('a 10,000-node cycle without a cap is one CYCLE_UNCAPPED, its message cut short', () => {
    // Back to n1, which has no cap: n1 ... n9999 form the cycle; n0 stays outside it.
    const builder = chain((b) => b.route(name(size - 1), () => END, [name(1), END]));

    const diagnostics = builder.validate();

    expect(lines(diagnostics)).toEqual(['CYCLE_UNCAPPED at n1']);
    expect(diagnostics[0]!.message.length).toBeLessThan(200);
    expect(diagnostics[0]!.message).toContain('n1 -> n2');
  });

  it('a fan-out whose branch is a 10,000-node chain, looped back into from after its join, is one BRANCH_ENTERED', () => {
    const builder = loose()
      .node('fan', pass)
      .node('merge', pass)
      .node('verify', pass, { visits: 3 });
    for (let i = 0; i < size; i++) builder.node(name(i), pass, { reads: [], writes: ['notes'] });
    for (let i = 0; i + 1 < size; i++) builder.edge(name(i), name(i + 1));
    builder
      .fanOut('fan', [name(0)], 'merge')
      .edge(name(size - 1), 'merge')
      .edge('merge', 'verify')
      .route('verify', () => END, [name(size / 2), END])
      .entry('fan');

    expect(lines(builder.validate())).toEqual([
      `BRANCH_ENTERED at verify on verify -> ${name(size / 2)}`,
    ]);
  });

  it('a 10,000-node loop with no way out is reported as a trap on every node, without overflowing the stack', () => {
    const builder = chain((b) => b.route(name(size - 1), () => name(0), [name(0)]));

    const diagnostics = builder.validate();

    expect(diagnostics).toHaveLength(size);
    expect(new Set(diagnostics.map((d) => d.code))).toEqual(new Set(['TRAP']));
  });
});
