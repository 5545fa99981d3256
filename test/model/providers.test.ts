import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { END, graph, isWaymarkError, run } from '../../src/index.js';
import {
  model,
  modelName,
  parseModelName,
  resolveModel,
  scriptedModel,
} from '../../src/model/index.js';

async function rejection(p: Promise<unknown>) {
  try {
    await p;
  } catch (e) {
    if (isWaymarkError(e)) return e;
    throw e;
  }
  throw new Error('expected a rejection');
}

describe('model names', () => {
  it('are provider:model-id, split at the first colon so model ids may hold colons', () => {
    expect(parseModelName('local:llama3.2:3b')).toEqual({
      provider: 'local',
      modelId: 'llama3.2:3b',
    });
    expect(parseModelName('openai:gpt-4o-mini')).toEqual({
      provider: 'openai',
      modelId: 'gpt-4o-mini',
    });
  });

  it.each(['gpt-4o', 'openai:', ':gpt-4o', 'acme:model'])('%s is MODEL_NAME_INVALID', (name) => {
    expect(() => parseModelName(name)).toThrow(/^MODEL_NAME_INVALID: .*openai, anthropic/);
  });

  it('of a model object is its provider (up to the first dot) and model id', async () => {
    expect(modelName(scriptedModel([], { modelId: 'auditor' }))).toBe('scripted:auditor');
    const m = await resolveModel('openai:gpt-4o-mini', { env: { OPENAI_API_KEY: 'sk-test' } });
    expect(m.provider).toBe('openai.responses');
    expect(modelName(m)).toBe('openai:gpt-4o-mini');
    const a = await resolveModel('anthropic:claude-haiku-4-5', {
      env: { ANTHROPIC_API_KEY: 'sk-test' },
    });
    expect(modelName(a)).toBe('anthropic:claude-haiku-4-5');
    const local = await resolveModel('local:qwen3:4b', { env: {} });
    expect(modelName(local)).toBe('openai-compatible:qwen3:4b');
  });
});

describe('credentials and packages', () => {
  it('a missing key is MODEL_KEY_MISSING naming the variable, before anything is sent', async () => {
    const e = await rejection(resolveModel('anthropic:claude-haiku-4-5', { env: {} }));
    expect(e.code).toBe('MODEL_KEY_MISSING');
    expect(e.message).toContain('ANTHROPIC_API_KEY');
    expect(e.details).toMatchObject({ variable: 'ANTHROPIC_API_KEY' });
    const empty = await rejection(resolveModel('openai:gpt-4o', { env: { OPENAI_API_KEY: '' } }));
    expect(empty.message).toContain('OPENAI_API_KEY');
  });

  it('a local model needs no key', async () => {
    await expect(resolveModel('openai-compatible:m', { env: {} })).resolves.toBeDefined();
  });

  it('a missing provider package is MODEL_PROVIDER_MISSING saying what to install', async () => {
    const e = await rejection(
      resolveModel('openai:gpt-4o', {
        env: { OPENAI_API_KEY: 'k' },
        importModule: () => Promise.reject(new Error("Cannot find package '@ai-sdk/openai'")),
      }),
    );
    expect(e.code).toBe('MODEL_PROVIDER_MISSING');
    expect(e.message).toContain('npm install @ai-sdk/openai');
  });
});

describe("the run's model", () => {
  const State = z.object({ a: z.string().default('') });
  const g = (m = scriptedModel([{ object: { a: 'scripted' } }])) =>
    graph('m', { state: State })
      .node(
        'n',
        model({
          model: m,
          prompt: () => 'a?',
          output: z.object({ a: z.string() }),
          resolve: { env: {} },
        }),
        { kind: 'model' },
      )
      .edge('n', END)
      .entry('n')
      .compile();

  it("overrides the node's own: a missing key for it is an error value naming the variable", async () => {
    const m = scriptedModel([{ object: { a: 'scripted' } }]);
    const result = await run(g(m), {}, { model: 'openai:gpt-4o-mini' });

    expect(result.status === 'failed' && result.error).toMatchObject({
      node: 'n',
      code: 'MODEL_KEY_MISSING',
      class: 'permanent',
    });
    expect(m.requests).toHaveLength(0);
  });

  it('a run model of an unknown provider is MODEL_NAME_INVALID as an error value', async () => {
    const result = await run(g(), {}, { model: 'acme:model-1' });
    expect(result.status === 'failed' && result.error.code).toBe('MODEL_NAME_INVALID');
  });
});
