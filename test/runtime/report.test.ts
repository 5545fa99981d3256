import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { END, graph, isWaymarkError, loadTrace, resume, run } from '../../src/index.js';
import { stores } from '../support/stores.js';

// What a node reports besides its update: model usage (into the trace and the run's spend),
// outputs its check set aside (into the run's quarantine, never into state), and turns.

const State = z.object({
  findings: z.array(z.object({ file: z.string(), line: z.number() })).default([]),
  fail: z.boolean().default(false),
});

function audit(calls = { n: 0 }) {
  return graph('report', { state: State })
    .node(
      'audit',
      (_s, ctx) => {
        calls.n++;
        ctx.usage({ inputTokens: 100, outputTokens: 20, model: 'scripted:auditor' });
        ctx.turn({ turn: 1, durationMs: 3, toolCalls: ['read_file'] });
        ctx.turn({ turn: 2, durationMs: 2 });
        const proposed = [
          { file: 'src/a.ts', line: 3 },
          { file: 'src/a.ts', line: 999 },
        ];
        const kept = proposed.filter((f) => f.line < 40);
        for (const f of proposed.filter((f) => f.line >= 40))
          ctx.quarantine(f, ['line-out-of-range']);
        return { findings: kept };
      },
      { writes: ['findings'] },
    )
    .node(
      'verify',
      (s, ctx) => {
        ctx.usage({ inputTokens: 50, outputTokens: 5, costUsd: 0.001 });
        if (s.fail) throw new Error('verifier down');
        return {};
      },
      { retry: { attempts: 2, backoffMs: 1 } },
    )
    .edge('audit', 'verify')
    .edge('verify', END)
    .entry('audit')
    .compile();
}

describe.each(stores)('what nodes report, with the %s store', (_name, makeStore) => {
  it('usage goes into each attempt trace entry and adds up in the run spend, failed attempts included', async () => {
    const store = makeStore();
    const result = await run(audit(), { fail: true }, { store, runId: 'r' });

    expect(result.status).toBe('failed');
    const entries = result.trace.entries.map((e) => [e.activation, e.attempt, e.usage]);
    expect(entries).toEqual([
      ['audit:1', 1, { inputTokens: 100, outputTokens: 20, model: 'scripted:auditor' }],
      ['verify:1', 1, { inputTokens: 50, outputTokens: 5, costUsd: 0.001 }],
      ['verify:1', 2, { inputTokens: 50, outputTokens: 5, costUsd: 0.001 }],
    ]);
    expect(result.spent).toEqual({ inputTokens: 200, outputTokens: 30, costUsd: 0.002 });
    // The stored trace says the same, across processes.
    expect((await loadTrace(store, 'r')).entries.map((e) => e.usage?.inputTokens)).toEqual([
      100, 50, 50,
    ]);
  });

  it('the spend survives a resume and keeps adding up', async () => {
    const store = makeStore();
    await run(audit(), { fail: true }, { store, runId: 'r' });

    const again = await resume(store, audit(), 'r');

    // The resumed verify fails twice more: 2 x 50 more input tokens.
    expect(again.spent.inputTokens).toBe(300);
  });

  it('a quarantined output is kept in the run, with node, activation and reasons, and not in state', async () => {
    const store = makeStore();
    const result = await run(audit(), {}, { store, runId: 'r' });

    expect(result.status).toBe('succeeded');
    expect(result.state.findings).toEqual([{ file: 'src/a.ts', line: 3 }]);
    expect(result.quarantine).toEqual([
      {
        node: 'audit',
        activation: 'audit:1',
        output: { file: 'src/a.ts', line: 999 },
        reasons: ['line-out-of-range'],
      },
    ]);
    // Read back from the store, as a resume or `waymark show` sees it.
    const resumed = await resume(store, audit(), 'r');
    expect(resumed.quarantine).toEqual(result.quarantine);
  });

  it('turns of a loop inside an attempt appear under its trace entry', async () => {
    const result = await run(audit(), {}, { store: makeStore() });
    expect(result.trace.entries[0]?.turns).toEqual([
      { turn: 1, durationMs: 3, toolCalls: ['read_file'] },
      { turn: 2, durationMs: 2 },
    ]);
    expect(result.trace.entries[1]?.turns).toBeUndefined();
  });
});

describe('the run budget and model a node sees', () => {
  it('ctx.budget and ctx.model are what the run was started with; ctx.spend what was spent before', async () => {
    const seen: unknown[] = [];
    const g = graph('budget', { state: z.object({ n: z.number().default(0) }) })
      .node('a', (_s, ctx) => {
        ctx.usage({ inputTokens: 10, outputTokens: 1 });
        seen.push({ spend: ctx.spend, budget: ctx.budget, model: ctx.model });
      })
      .node('b', (_s, ctx) => {
        seen.push({ spend: ctx.spend, budget: ctx.budget, model: ctx.model });
      })
      .edge('a', 'b')
      .edge('b', END)
      .entry('a')
      .compile();

    await run(g, {}, { model: 'openai:gpt-4o-mini', budget: { maxTokens: 1000 } });

    expect(seen).toEqual([
      {
        spend: { inputTokens: 0, outputTokens: 0, costUsd: 0 },
        budget: { maxTokens: 1000 },
        model: 'openai:gpt-4o-mini',
      },
      {
        spend: { inputTokens: 10, outputTokens: 1, costUsd: 0 },
        budget: { maxTokens: 1000 },
        model: 'openai:gpt-4o-mini',
      },
    ]);
  });

  it('refuses a model not named provider:model-id, and a budget that is not a positive number', async () => {
    const g = audit();
    const code = (p: Promise<unknown>) =>
      p.then(
        () => 'resolved',
        (e: unknown) => (isWaymarkError(e) ? e.code : String(e)),
      );
    expect(await code(run(g, {}, { model: 'gpt-4o' }))).toBe('OPTIONS_INVALID');
    expect(await code(run(g, {}, { budget: { maxTokens: 0 } }))).toBe('OPTIONS_INVALID');
    expect(await code(run(g, {}, { budget: { maxCostUsd: -1 } }))).toBe('OPTIONS_INVALID');
  });

  it('usage that is not a count fails the node with REPORT_INVALID', async () => {
    const g = graph('bad', { state: z.object({}) })
      .node('a', (_s, ctx) => {
        ctx.usage({ inputTokens: -1, outputTokens: 0 });
      })
      .edge('a', END)
      .entry('a')
      .compile();
    const result = await run(g, {});
    expect(result.status).toBe('failed');
    expect(result.status === 'failed' && result.error.code).toBe('REPORT_INVALID');
  });
});
