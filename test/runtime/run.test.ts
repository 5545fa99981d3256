import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { append, END, graph, isWaymarkError, run } from '../../src/index.js';

const Claim = z.object({
  claim: z.string(),
  queries: z.array(z.string()).default([]),
  log: z.array(z.string()).default([]),
  published: z.boolean().default(false),
});

describe('running a graph in memory', () => {
  it('runs a chain to the end and returns the final state, the path and one trace entry per activation', async () => {
    const g = graph('chain', { state: Claim, reducers: { log: append } })
      .node('plan', (s) => ({ queries: [`${s.claim}?`], log: ['plan'] }))
      .node('search', async () => ({ log: ['search'] }))
      .node('publish', async () => ({ published: true, log: ['publish'] }))
      .edge('plan', 'search')
      .edge('search', 'publish')
      .edge('publish', END)
      .entry('plan')
      .compile();

    const result = await run(g, { claim: 'tea is older than coffee' }, { runId: 'run-1' });

    expect(result.status).toBe('succeeded');
    expect(result.runId).toBe('run-1');
    expect(result.state).toEqual({
      claim: 'tea is older than coffee',
      queries: ['tea is older than coffee?'],
      log: ['plan', 'search', 'publish'],
      published: true,
    });
    expect(result.trace.path).toEqual(['plan', 'search', 'publish']);
    expect(result.trace.entries.map((e) => [e.activation, e.attempt, e.status])).toEqual([
      ['plan:1', 1, 'succeeded'],
      ['search:1', 1, 'succeeded'],
      ['publish:1', 1, 'succeeded'],
    ]);
    expect(result.steps).toBe(3);
  });

  it('rejects input that does not match the state schema before anything runs', async () => {
    let ran = false;
    const g = graph('g', { state: Claim })
      .node('a', () => {
        ran = true;
      })
      .edge('a', END)
      .entry('a')
      .compile();
    const failure = await run(g, { claim: 42 } as never).catch((e: unknown) => e);
    expect(isWaymarkError(failure) && failure.code).toBe('INPUT_INVALID');
    expect(String(failure)).toContain('claim');
    expect(ran).toBe(false);
  });

  it('gives a node and a router deeply frozen state: a mutation throws where it is attempted', async () => {
    const seen: string[] = [];
    const g = graph('frozen', { state: Claim })
      .node('mutate', (s) => {
        try {
          (s.log as string[]).push('sneaky');
        } catch (e) {
          seen.push(`node: ${(e as Error).constructor.name}`);
        }
        try {
          (s as { claim: string }).claim = 'changed';
        } catch (e) {
          seen.push(`node: ${(e as Error).constructor.name}`);
        }
        return { queries: ['q'] };
      })
      .node('after', () => undefined, { terminal: true })
      .route(
        'mutate',
        (s) => {
          try {
            (s.queries as string[]).pop();
          } catch (e) {
            seen.push(`router: ${(e as Error).constructor.name}`);
          }
          return 'after';
        },
        ['after'],
      )
      .entry('mutate')
      .compile();

    const result = await run(g, { claim: 'c', log: ['original'] });

    expect(seen).toEqual(['node: TypeError', 'node: TypeError', 'router: TypeError']);
    expect(result.state).toMatchObject({ claim: 'c', log: ['original'], queries: ['q'] });
  });

  it('keeps the state apart from the object a node returned: changing it afterwards changes nothing', async () => {
    const kept: string[] = ['a'];
    const g = graph('g', { state: Claim })
      .node('write', () => ({ queries: kept }))
      .edge('write', END)
      .entry('write')
      .compile();
    const result = await run(g, { claim: 'c' });
    kept.push('b');
    expect(result.state.queries).toEqual(['a']);
    expect(Object.isFrozen(result.state.queries)).toBe(true);
  });

  it('fails the run with ROUTE_UNDECLARED naming the router and the value it returned', async () => {
    const g = graph('route', { state: Claim })
      .node('verify', () => ({}))
      .node('publish', () => ({}), { terminal: true })
      // The cast stands for a router whose logic drifted from its declaration at run time.
      .route('verify', () => 'plan' as 'publish', ['publish'])
      .entry('verify')
      .compile();

    const result = await run(g, { claim: 'c' });

    expect(result.status).toBe('failed');
    if (result.status !== 'failed') return;
    expect(result.error.code).toBe('ROUTE_UNDECLARED');
    expect(result.error.message).toContain('router of "verify"');
    expect(result.error.message).toContain('"plan"');
    expect(result.error.details).toMatchObject({
      router: 'verify',
      value: 'plan',
      targets: ['publish'],
    });
    expect(result.trace.path).toEqual(['verify']);
  });

  it('fails the run with ROUTER_FAILED when a router throws', async () => {
    const g = graph('route', { state: Claim })
      .node('verify', () => ({}))
      .route('verify', () => {
        throw new Error('no idea');
      }, [END])
      .entry('verify')
      .compile();
    const result = await run(g, { claim: 'c' });
    expect(result.status === 'failed' && result.error.code).toBe('ROUTER_FAILED');
    expect(result.status === 'failed' && result.error.message).toContain('no idea');
  });
});

describe('visit caps', () => {
  it('stops a claim-research loop whose router always loops at the cap, after a bounded number of steps', async () => {
    const calls = { plan: 0, search: 0, verify: 0 };
    const g = graph('claims', { state: Claim, reducers: { log: append } })
      .node(
        'plan',
        () => {
          calls.plan++;
          return { log: ['plan'] };
        },
        { visits: 3 },
      )
      .node('search', () => {
        calls.search++;
      })
      .node('verify', () => {
        calls.verify++;
      })
      .edge('plan', 'search')
      .edge('search', 'verify')
      .route('verify', () => 'plan', ['plan', END])
      .entry('plan')
      .compile();

    const result = await run(g, { claim: 'the moon is cheese' });

    expect(result.status).toBe('failed');
    if (result.status !== 'failed') return;
    expect(result.error).toMatchObject({
      code: 'VISIT_CAP',
      class: 'cap',
      node: 'plan',
      activation: 'plan:4',
    });
    expect(result.error.message).toBe('node "plan" reached its visit cap of 3 after 9 steps');
    expect(result.steps).toBe(9);
    expect(calls).toEqual({ plan: 3, search: 3, verify: 3 });
    expect(result.errors).toEqual([result.error]);
  });

  it('follows the capped node onError route when it has one', async () => {
    const g = graph('claims', { state: Claim })
      .node('plan', () => ({}), { visits: 2, onError: 'give-up' })
      .node('give-up', (_s, ctx) => ({ queries: [ctx.error?.code ?? 'none'] }), { terminal: true })
      .route('plan', () => 'plan', ['plan'])
      .entry('plan')
      .compile();
    const result = await run(g, { claim: 'c' });
    expect(result.status).toBe('succeeded');
    expect(result.state.queries).toEqual(['VISIT_CAP']);
    expect(result.trace.path).toEqual(['plan', 'plan', 'give-up']);
  });

  it('stops a run at its step limit with STEP_LIMIT', async () => {
    const g = graph('loop', { state: Claim })
      .node('a', () => ({}), { visits: 1_000 })
      .route('a', () => 'a', ['a', END])
      .entry('a')
      .compile();
    const result = await run(g, { claim: 'c' }, { maxSteps: 5 });
    expect(result.status === 'failed' && result.error).toMatchObject({
      code: 'STEP_LIMIT',
      class: 'cap',
    });
    expect(result.steps).toBe(5);
  });
});

describe('run options', () => {
  const g = graph('g', { state: Claim })
    .node('a', () => ({}))
    .edge('a', END)
    .entry('a')
    .compile();

  it('rejects a run timeout a timer cannot honour, or a step limit that is not a whole number', async () => {
    for (const options of [
      { timeoutMs: 3e9 },
      { timeoutMs: 0 },
      { maxSteps: 0 },
      { maxSteps: 2.5 },
    ]) {
      const failure = await run(g, { claim: 'c' }, options).catch((e: unknown) => e);
      expect(isWaymarkError(failure) && failure.code, JSON.stringify(options)).toBe(
        'OPTIONS_INVALID',
      );
    }
  });

  it('fails the run instead of recursing when a capped node routes its errors to itself', async () => {
    const loop = graph('g', { state: z.object({ n: z.number().default(0) }) })
      .node('a', (s) => ({ n: s.n + 1 }), { visits: 2, onError: 'a' })
      .route('a', (s) => (s.n > 100 ? END : 'a'), ['a', END])
      .entry('a')
      .compile();
    const result = await run(loop, {});
    expect(result.status === 'failed' && result.error.code).toBe('VISIT_CAP');
    expect(result.errors.map((e) => e.code)).toEqual(['VISIT_CAP', 'VISIT_CAP']);
    expect(result.state.n).toBe(2);
  });
});
