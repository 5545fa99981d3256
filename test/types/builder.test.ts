// These tests are checked by the type-checker (`npm run typecheck`): every `@ts-expect-error`
// fails the build if the error it expects goes away.
import { describe, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import {
  append,
  type CompiledGraph,
  END,
  graph,
  type RunResult,
  run,
  sum,
} from '../../src/index.js';
import { longChain } from './long-chain.generated.js';

const State = z.object({
  claim: z.string(),
  queries: z.array(z.string()).default([]),
  score: z.number().default(0),
});
type State = z.output<typeof State>;

describe('the builder infers types from the state schema', () => {
  it('types node state, updates, routers and run results from the schema', async () => {
    const g = graph('typed', { state: State, reducers: { queries: append, score: sum } })
      .node(
        'plan',
        (s) => {
          expectTypeOf(s.claim).toEqualTypeOf<string>();
          expectTypeOf(s.queries).toEqualTypeOf<string[]>();
          return { queries: [s.claim] };
        },
        { visits: 3 },
      )
      .node('verify', () => ({ score: 1 }), { writes: ['score'], reads: ['queries'] })
      .edge('plan', 'verify')
      .route('verify', (s) => (s.score > 0 ? END : 'plan'), ['plan', END])
      .entry('plan')
      .compile();

    expectTypeOf(g).toEqualTypeOf<CompiledGraph<State, z.input<typeof State>>>();
    const pending = run(g, { claim: 'c' });
    expectTypeOf(pending).toEqualTypeOf<Promise<RunResult<State>>>();
    await pending;
  });

  it('rejects mistakes at compile time', () => {
    graph('bad', { state: State })
      // @ts-expect-error a node that declares writes: ['score'] cannot return other fields
      .node('a', () => ({ claim: 'x' }), { writes: ['score'] })
      // @ts-expect-error an update must use the field's type
      .node('b', () => ({ score: 'high' }))
      // @ts-expect-error reads names a field the schema lacks
      .node('c', () => ({}), { reads: ['title'] })
      // @ts-expect-error an edge to a node that was never declared
      .edge('a', 'nowhere')
      // @ts-expect-error a router may only return a declared target
      .route('b', () => 'c', ['a', END])
      // @ts-expect-error the entry must be a declared node
      .entry('missing');

    // @ts-expect-error append does not fit a number field
    graph('bad-reducer', { state: State, reducers: { score: append } });

    const g = graph('g', { state: State })
      .node('a', () => ({}))
      .edge('a', END)
      .entry('a')
      .compile();
    // @ts-expect-error the run input must match the schema's input type
    void run(g, { claim: 1 }).catch(() => undefined);
  });
});

describe('long chains', () => {
  it('a generated 200-node builder chain type-checks and runs every node once', async () => {
    const result = await run(longChain, { count: 0 });
    expectTypeOf(result.state.count).toEqualTypeOf<number>();
    if (result.state.count !== 200)
      throw new Error(`expected 200 steps, got ${result.state.count}`);
  });
});
