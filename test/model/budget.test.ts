import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { END, graph, type RunOptions, run } from '../../src/index.js';
import {
  type ModelOptions,
  model,
  type ScriptedModel,
  scriptedModel,
} from '../../src/model/index.js';

const State = z.object({ a: z.string().default(''), b: z.string().default('') });
type S = z.output<typeof State>;
const usage = { inputTokens: 80, outputTokens: 20 };
const prices = { 'scripted:model': { inputPerMillion: 1000, outputPerMillion: 5000 } };

function twoNodes(
  m: ScriptedModel,
  options: Partial<ModelOptions<S, { a: string } | { b: string }>> = {},
  retry = false,
) {
  return graph('budget', { state: State })
    .node(
      'first',
      model({ model: m, prompt: () => 'a?', output: z.object({ a: z.string() }), ...options }),
      { kind: 'model', ...(retry && { retry: { attempts: 3 } }) },
    )
    .node(
      'second',
      model({ model: m, prompt: () => 'b?', output: z.object({ b: z.string() }), ...options }),
      { kind: 'model' },
    )
    .edge('first', 'second')
    .edge('second', END)
    .entry('first')
    .compile();
}

const answers = () =>
  scriptedModel((r) => ({ object: r.text.includes('a?') ? { a: 'A' } : { b: 'B' }, usage }));

async function failed(m: ScriptedModel, options = {}, runOptions: RunOptions = {}, retry = false) {
  const result = await run(twoNodes(m, options, retry), {}, runOptions);
  if (result.status !== 'failed') throw new Error(`expected failed, got ${result.status}`);
  return result;
}

describe('node budgets', () => {
  it('a node past its maxTokens stops with BUDGET_EXCEEDED, class budget, and keeps no answer', async () => {
    const result = await failed(answers(), { maxTokens: 60 });

    expect(result.error).toMatchObject({
      node: 'first',
      code: 'BUDGET_EXCEEDED',
      class: 'budget',
      details: { limit: 'node.maxTokens', max: 60, spent: 100 },
    });
    expect(result.state.a).toBe('');
    // What the call spent is still booked.
    expect(result.spent).toEqual({ inputTokens: 80, outputTokens: 20, costUsd: 0 });
  });

  it('is not retried by a retry policy with the default retryOn', async () => {
    const m = answers();
    const result = await failed(m, { maxTokens: 60 }, {}, true);

    expect(result.error.code).toBe('BUDGET_EXCEEDED');
    expect(m.requests).toHaveLength(1);
  });

  it('caps the reply the provider may write at what maxTokens leaves', async () => {
    const m = answers();
    await run(twoNodes(m, { maxTokens: 500, maxOutputTokens: 1000 }), {});

    expect(m.requests[0]?.options.maxOutputTokens).toBe(500);
  });

  it('prices give each call a cost; maxCostUsd stops a node that spends more', async () => {
    const ok = await run(twoNodes(answers(), { prices }), {});
    // 80 * 1000/1e6 + 20 * 5000/1e6 = 0.08 + 0.1 per call.
    expect(ok.trace.entries[0]?.usage).toEqual({
      ...usage,
      model: 'scripted:model',
      costUsd: 0.18,
    });
    expect(ok.spent.costUsd).toBeCloseTo(0.36);

    const result = await failed(answers(), { prices, maxCostUsd: 0.1 });
    expect(result.error).toMatchObject({
      code: 'BUDGET_EXCEEDED',
      details: { limit: 'node.maxCostUsd', max: 0.1 },
    });
  });

  it('a cost budget on a model with no price is MODEL_PRICE_MISSING before any call', async () => {
    const m = answers();
    const result = await failed(m, { maxCostUsd: 1 });

    expect(result.error).toMatchObject({ code: 'MODEL_PRICE_MISSING', class: 'permanent' });
    expect(m.requests).toHaveLength(0);
  });
});

describe('the run budget', () => {
  it('counts what earlier nodes spent: the node that passes it stops with BUDGET_EXCEEDED', async () => {
    const result = await failed(answers(), {}, { budget: { maxTokens: 150 } });

    expect(result.state.a).toBe('A');
    expect(result.error).toMatchObject({
      node: 'second',
      code: 'BUDGET_EXCEEDED',
      details: { limit: 'run.maxTokens', max: 150, spent: 200 },
    });
  });

  it('a node does not call the model once the run budget is spent', async () => {
    const m = answers();
    const result = await failed(m, {}, { budget: { maxTokens: 100 } });

    expect(result.error).toMatchObject({ node: 'second', details: { limit: 'run.maxTokens' } });
    expect(m.requests).toHaveLength(1);
  });

  it('a run cost budget needs prices, and counts cost', async () => {
    const result = await failed(answers(), { prices }, { budget: { maxCostUsd: 0.3 } });

    expect(result.error).toMatchObject({ node: 'second', details: { limit: 'run.maxCostUsd' } });
    const unpriced = await failed(answers(), {}, { budget: { maxCostUsd: 0.3 } });
    expect(unpriced.error.code).toBe('MODEL_PRICE_MISSING');
  });
});
