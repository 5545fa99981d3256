import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { END, graph, run } from '../../src/index.js';
import { agent, type ModelOptions, model, scriptedModel } from '../../src/model/index.js';

const State = z.object({
  topic: z.string(),
  title: z.string().default(''),
  words: z.number().default(0),
});

const Title = z.object({ title: z.string().min(3), words: z.number().int() });

type S = z.output<typeof State>;

function titled(
  m: ReturnType<typeof scriptedModel>,
  extra: Partial<ModelOptions<S, z.output<typeof Title>>> = {},
) {
  return graph('title', { state: State })
    .node(
      'name',
      model({
        model: m,
        system: 'You name things.',
        prompt: (s) => `Name a post about ${s.topic}.`,
        output: Title,
        ...extra,
      }),
      { kind: 'model', writes: ['title', 'words'] },
    )
    .edge('name', END)
    .entry('name')
    .compile();
}

describe('a model node', () => {
  it('puts the validated output into state and its usage and model into the trace', async () => {
    const m = scriptedModel([
      { object: { title: 'Tea first', words: 2 }, usage: { inputTokens: 40, outputTokens: 9 } },
    ]);
    const result = await run(titled(m), { topic: 'tea' });

    expect(result.status).toBe('succeeded');
    expect(result.state).toMatchObject({ title: 'Tea first', words: 2 });
    expect(result.trace.entries[0]?.usage).toEqual({
      inputTokens: 40,
      outputTokens: 9,
      model: 'scripted:model',
    });
    expect(result.spent).toEqual({ inputTokens: 40, outputTokens: 9, costUsd: 0 });
    expect(m.requests[0]?.text).toBe('system: You name things.\nuser: Name a post about tea.');
    expect(m.requests[0]?.options.responseFormat).toMatchObject({ type: 'json' });
  });

  it('retries a reply that fails the schema with the validation error attached, then keeps the valid one', async () => {
    const m = scriptedModel([
      { object: { title: 'x', words: 2 } },
      { text: 'not json at all' },
      { object: { title: 'Tea first', words: 2 } },
    ]);
    const result = await run(titled(m), { topic: 'tea' });

    expect(result.status).toBe('succeeded');
    expect(result.state.title).toBe('Tea first');
    expect(m.requests).toHaveLength(3);
    expect(m.requests[1]?.text).toContain('assistant: {"title":"x","words":2}');
    expect(m.requests[1]?.text).toMatch(/did not match the required JSON schema: .*title/);
    expect(m.requests[2]?.text).toContain('assistant: not json at all');
    // Every call is booked and is a turn of the attempt.
    expect(result.trace.entries).toHaveLength(1);
    expect(result.trace.entries[0]?.turns?.map((t) => t.turn)).toEqual([1, 2, 3]);
  });

  it('gives up after maxAttempts invalid replies with MODEL_OUTPUT_INVALID, class check, not retried', async () => {
    const m = scriptedModel(() => ({ object: { title: 'x', words: 1.5 } }));
    const g = titled(m, { maxAttempts: 2 });
    const result = await run(g, { topic: 'tea' });

    expect(result.status).toBe('failed');
    expect(result.status === 'failed' && result.error).toMatchObject({
      code: 'MODEL_OUTPUT_INVALID',
      class: 'check',
      node: 'name',
    });
    expect(m.requests).toHaveLength(2);
    expect(result.state.title).toBe('');
  });
});

describe('the types of a model node', () => {
  it('take the state from the graph, also when the node declares writes and maps its output', () => {
    graph('types', { state: State })
      .node(
        'name',
        model({
          model: scriptedModel([]),
          prompt: (s) => {
            // @ts-expect-error: the state has no field "nope"
            s.nope;
            return s.topic;
          },
          output: Title,
          update: (o, s) => ({ title: `${s.topic}: ${o.title}` }),
        }),
        { writes: ['title'] },
      )
      .edge('name', END)
      .entry('name')
      .compile();
    expect(true).toBe(true);
  });
});

describe('the kind of a model node', () => {
  it('is model without saying so: model() and agent() mark the functions they return', () => {
    const m = scriptedModel([]);
    const output = z.object({ title: z.string() });
    const g = graph('kinds', { state: State })
      .node('name', model({ model: m, prompt: () => 'name it', output }))
      .node('explore', agent({ model: m, prompt: () => 'look', output, tools: {}, maxTurns: 2 }))
      .node('plain', () => ({}))
      .edge('name', 'explore')
      .edge('explore', 'plain')
      .edge('plain', END)
      .entry('name')
      .compile();
    expect(g.def.nodes.map((n) => [n.name, n.kind])).toEqual([
      ['name', 'model'],
      ['explore', 'model'],
      ['plain', 'code'],
    ]);
  });
});
