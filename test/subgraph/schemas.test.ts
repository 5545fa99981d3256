import { describe, expect, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import {
  continueThread,
  END,
  graph,
  isWaymarkError,
  MemoryStore,
  type resume,
  run,
} from '../../src/index.js';

const State = z.object({
  claim: z.string(),
  lang: z.string().default('en'),
  verdict: z.string().default(''),
  scratch: z.array(z.string()).default([]),
});

/** check -> END, with `claim`/`lang` as inputs, `verdict` as output, `scratch` private. */
function checker() {
  return graph('checker', {
    state: State,
    input: State.pick({ claim: true, lang: true }),
    output: State.pick({ verdict: true }),
  })
    .node('check', (s) => ({ verdict: `${s.lang}:${s.claim.length > 3}`, scratch: ['checked'] }))
    .edge('check', END)
    .entry('check')
    .compile();
}

const thrown = async (p: Promise<unknown>) => {
  try {
    await p;
  } catch (e) {
    return isWaymarkError(e) ? { code: e.code, message: e.message, details: e.details } : e;
  }
  return 'resolved';
};

describe('a graph with input and output schemas', () => {
  it('hands back only its output fields as result.output; the rest stays in result.state', async () => {
    const result = await run(checker(), { claim: 'water boils' });

    expect(result.status).toBe('succeeded');
    expect(result.output).toEqual({ verdict: 'en:true' });
    expect(result.state.scratch).toEqual(['checked']);
  });

  it('refuses a field outside its input schema with INPUT_NOT_ALLOWED, before anything is recorded', async () => {
    const store = new MemoryStore();
    const refused = await thrown(
      // @ts-expect-error: scratch is private to the graph, not an input
      run(checker(), { claim: 'x', scratch: ['forged'] }, { store, runId: 'r' }),
    );

    expect(refused).toEqual({
      code: 'INPUT_NOT_ALLOWED',
      message:
        'INPUT_NOT_ALLOWED: the input of "checker" sets "scratch", which is not among its inputs [claim, lang]',
      details: { fields: ['scratch'], inputs: ['claim', 'lang'] },
    });
    expect(await store.getRun('r')).toBeUndefined();
  });

  it('checks the input against the input schema: a wrong type is INPUT_INVALID', async () => {
    const refused = (await thrown(run(checker(), { claim: 3 as unknown as string }))) as {
      code: string;
    };

    expect(refused.code).toBe('INPUT_INVALID');
  });

  it('fills the private fields with their defaults, as a run without schemas does', async () => {
    const g = graph('defaults', {
      state: State,
      input: State.pick({ claim: true }),
      output: State.pick({ scratch: true, lang: true }),
    })
      .node('noop', () => undefined)
      .edge('noop', END)
      .entry('noop')
      .compile();

    const result = await run(g, { claim: 'c' });

    expect(result.output).toEqual({ scratch: [], lang: 'en' });
  });

  it('infers the input and output types from the schemas', async () => {
    const g = checker();
    const result = await run(g, { claim: 'c', lang: 'de' });

    expectTypeOf(result.output).toEqualTypeOf<{ verdict: string }>();
    expectTypeOf(result.state.scratch).toEqualTypeOf<string[]>();
    expectTypeOf(g).toExtend<Parameters<typeof resume>[1]>();
  });

  it('keeps result.output the state itself for a graph without an output schema', async () => {
    const g = graph('plain', { state: State })
      .node('check', () => ({ verdict: 'ok' }))
      .edge('check', END)
      .entry('check')
      .compile();

    const result = await run(g, { claim: 'c', scratch: ['anyone may set it'] });

    expect(result.output).toBe(result.state);
    expect(g.def).not.toHaveProperty('inputs');
    expect(g.def).not.toHaveProperty('outputs');
  });

  it('reports an input or output field that is not a state field', () => {
    const problems = graph('bad', {
      state: State,
      input: z.object({ claim: z.string(), typo: z.string() }),
      output: z.object({ verdcit: z.string() }),
    })
      .node('check', () => undefined)
      .edge('check', END)
      .entry('check')
      .validate()
      .map((d) => `${d.code}: ${d.message}`);

    expect(problems).toEqual([
      'FIELD_UNKNOWN: the input schema names "typo", which is not a state field',
      'FIELD_UNKNOWN: the output schema names "verdcit", which is not a state field',
    ]);
  });

  it('changes the structural hash when input or output schemas are declared', () => {
    const plain = graph('checker', { state: State })
      .node('check', () => undefined)
      .edge('check', END)
      .entry('check')
      .compile();
    const withOutput = graph('checker', { state: State, output: State.pick({ verdict: true }) })
      .node('check', () => undefined)
      .edge('check', END)
      .entry('check')
      .compile();

    expect(withOutput.hash).not.toBe(plain.hash);
  });
});

describe('a thread of a graph with an input schema', () => {
  it('continues from the whole state, private fields included; its next input is held to the schema', async () => {
    const store = new MemoryStore();
    const g = checker();
    const first = await run(g, { claim: 'water boils' }, { store });

    const second = await continueThread(store, g, first.runId, { claim: 'ice melts' });
    const refused = await thrown(continueThread(store, g, first.runId, { scratch: ['forged'] }));

    expect(second.status).toBe('succeeded');
    expect(second.state).toMatchObject({ claim: 'ice melts', scratch: ['checked'] });
    expect((refused as { code: string }).code).toBe('INPUT_NOT_ALLOWED');
  });
});
