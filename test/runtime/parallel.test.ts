import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  any,
  append,
  best,
  END,
  graph,
  isWaymarkError,
  quorum,
  run,
  union,
} from '../../src/index.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const jitter = () => sleep(Math.random() * 8);

const Bug = z.object({
  report: z.string(),
  files: z.array(z.string()).default([]),
  log: z.array(z.string()).default([]),
  verified: z.boolean().default(false),
});

/** triage -> fan-out {fix code, update tests} -> join(all) -> verify */
const bugPipeline = (delay: () => Promise<unknown> = async () => undefined, withReducers = true) =>
  graph('bug-pipeline', { state: Bug, reducers: withReducers ? { files: union, log: append } : {} })
    .node('triage', (s) => ({ log: [`triage: ${s.report}`] }))
    .node(
      'fix-code',
      async () => {
        await delay();
        return { files: ['src/billing.ts', 'src/money.ts'], log: ['fixed the rounding'] };
      },
      { writes: ['files', 'log'] },
    )
    .node(
      'update-tests',
      async () => {
        await delay();
        return { files: ['test/billing.test.ts', 'src/money.ts'], log: ['added a failing case'] };
      },
      { writes: ['files', 'log'] },
    )
    .node('merge', (s) => ({ log: [`merged ${s.files.length} files`] }))
    .node('verify', () => ({ verified: true }), { terminal: true })
    .fanOut('triage', ['fix-code', 'update-tests'], 'merge')
    .edge('fix-code', 'merge')
    .edge('update-tests', 'merge')
    .edge('merge', 'verify')
    .entry('triage');

describe('fixed fan-out and join(all)', () => {
  it('runs both branches of the bug pipeline and merges them in branch order, whichever finished first', async () => {
    const result = await run(bugPipeline(jitter).compile(), { report: 'invoice off by a cent' });

    expect(result.status).toBe('succeeded');
    expect(result.state).toEqual({
      report: 'invoice off by a cent',
      files: ['src/billing.ts', 'src/money.ts', 'test/billing.test.ts'],
      log: [
        'triage: invoice off by a cent',
        'fixed the rounding',
        'added a failing case',
        'merged 3 files',
      ],
      verified: true,
    });
    expect(result.trace.path).toHaveLength(5);
    expect(result.trace.entries.map((e) => e.activation).sort()).toEqual([
      'merge:1',
      'triage:1',
      'triage:1[0]/fix-code:1',
      'triage:1[1]/update-tests:1',
      'verify:1',
    ]);
  });

  it('produces byte-identical final state over 50 runs with random branch delays', async () => {
    const g = bugPipeline(jitter).compile();
    const outputs = new Set<string>();
    for (let i = 0; i < 50; i++) {
      const result = await run(g, { report: 'r' });
      outputs.add(JSON.stringify(result.state));
    }
    expect(outputs.size).toBe(1);
  });

  it('refuses at compile time the same pipeline without reducers: both branches write files and log', () => {
    const failure = (() => {
      try {
        bugPipeline(undefined, false).compile();
      } catch (e) {
        return e;
      }
    })();
    expect(isWaymarkError(failure) && failure.code).toBe('GRAPH_INVALID');
    const conflicts = (failure as { details: { code: string; message: string }[] }).details;
    expect(conflicts.map((d) => d.code)).toEqual(['WRITE_CONFLICT', 'WRITE_CONFLICT']);
    expect(conflicts.map((d) => d.message).join('\n')).toMatch(/"files"[\s\S]*"log"/);
  });

  it('gives each branch the state at the fan-out plus its own updates, never a sibling in-flight write', async () => {
    const seen: Record<string, readonly string[]> = {};
    const g = graph('isolation', { state: Bug, reducers: { log: append } })
      .node('start', () => ({ log: ['start'] }))
      .node('a1', () => ({ log: ['a1'] }), { writes: ['log'] })
      .node(
        'a2',
        async (s) => {
          await sleep(5);
          seen.a2 = s.log;
          return { log: ['a2'] };
        },
        { writes: ['log'] },
      )
      .node(
        'b1',
        async (s) => {
          await sleep(2);
          seen.b1 = s.log;
          return { log: ['b1'] };
        },
        { writes: ['log'] },
      )
      .node('join', (s) => {
        seen.join = s.log;
      })
      .fanOut('start', ['a1', 'b1'], 'join')
      .edge('a1', 'a2')
      .edge('a2', 'join')
      .edge('b1', 'join')
      .edge('join', END)
      .entry('start')
      .compile();

    await run(g, { report: 'r' });

    expect(seen.a2).toEqual(['start', 'a1']);
    expect(seen.b1).toEqual(['start']);
    expect(seen.join).toEqual(['start', 'a1', 'a2', 'b1']);
  });
});

const Search = z.object({
  query: z.string().default('q'),
  answer: z.string().default(''),
  score: z.number().default(0),
  answers: z.array(z.string()).default([]),
});

describe('any, quorum and best', () => {
  it('any: the first success wins, the losers see their signal abort and their late updates are discarded', async () => {
    const aborted: string[] = [];
    const slow =
      (name: string, ms: number) => async (_s: unknown, ctx: { signal: AbortSignal }) => {
        ctx.signal.addEventListener('abort', () => aborted.push(name));
        await sleep(ms);
        return { answer: name, answers: [name] };
      };
    const g = graph('race', { state: Search, reducers: { answers: append } })
      .node('ask', () => ({}))
      .node('mirror-a', slow('mirror-a', 40), { writes: ['answer', 'answers'] })
      .node('mirror-b', slow('mirror-b', 1), { writes: ['answer', 'answers'] })
      .node('mirror-c', slow('mirror-c', 40), { writes: ['answer', 'answers'] })
      .node('first', (_s, ctx) => ({ score: ctx.join?.merged.length ?? -1 }), { join: any() })
      .fanOut('ask', ['mirror-a', 'mirror-b', 'mirror-c'], 'first')
      .edge('mirror-a', 'first')
      .edge('mirror-b', 'first')
      .edge('mirror-c', 'first')
      .edge('first', END)
      .entry('ask')
      .compile();

    const result = await run(g, {});
    await sleep(60); // let the losers finish: their results must change nothing

    expect(result.status).toBe('succeeded');
    expect(result.state).toMatchObject({ answer: 'mirror-b', answers: ['mirror-b'], score: 1 });
    expect(aborted.sort()).toEqual(['mirror-a', 'mirror-c']);
    const cancelled = result.trace.entries
      .filter((e) => e.status === 'cancelled')
      .map((e) => e.node);
    expect(cancelled.sort()).toEqual(['mirror-a', 'mirror-c']);
  });

  it('quorum(2): merges the first two successes in branch order and cancels the third', async () => {
    const g = graph('quorum', { state: Search, reducers: { answers: append } })
      .node('ask', () => ({}))
      .node(
        'a',
        async () => {
          await sleep(30);
          return { answers: ['a'] };
        },
        { writes: ['answers'] },
      )
      .node(
        'b',
        async () => {
          await sleep(10);
          return { answers: ['b'] };
        },
        { writes: ['answers'] },
      )
      .node(
        'c',
        async () => {
          await sleep(1);
          return { answers: ['c'] };
        },
        { writes: ['answers'] },
      )
      .node('agree', () => ({}), { join: quorum(2) })
      .fanOut('ask', ['a', 'b', 'c'], 'agree')
      .edge('a', 'agree')
      .edge('b', 'agree')
      .edge('c', 'agree')
      .edge('agree', END)
      .entry('ask')
      .compile();
    const result = await run(g, {});
    expect(result.state.answers).toEqual(['b', 'c']);
  });

  it('best(score): waits for every branch and keeps the one whose branch state scores highest', async () => {
    const draft = (text: string, score: number, ms: number) => async () => {
      await sleep(ms);
      return { answer: text, score };
    };
    const g = graph('best', { state: Search })
      .node('ask', () => ({}))
      .node('short', draft('short', 0.4, 1), { writes: ['answer', 'score'] })
      .node('long', draft('long', 0.9, 20), { writes: ['answer', 'score'] })
      .node('odd', draft('odd', 0.1, 5), { writes: ['answer', 'score'] })
      .node('pick', (_s, ctx) => ({ answers: ctx.join?.merged.map(String) ?? [] }), {
        join: best((s) => s.score),
      })
      .fanOut('ask', ['short', 'long', 'odd'], 'pick')
      .edge('short', 'pick')
      .edge('long', 'pick')
      .edge('odd', 'pick')
      .edge('pick', END)
      .entry('ask')
      .compile();
    const result = await run(g, {});
    expect(result.state).toMatchObject({ answer: 'long', score: 0.9, answers: ['1'] });
  });
});

const Audit = z.object({
  files: z.array(z.string()),
  findings: z.array(z.string()).default([]),
  rounds: z.number().default(0),
  log: z.array(z.string()).default([]),
});

describe('map over items', () => {
  it('runs 100 audits with concurrency 4, never more than 4 at once, and joins them in item order', async () => {
    let running = 0;
    let peak = 0;
    const g = graph('audit', { state: Audit, reducers: { findings: append } })
      .node('list', () => ({}))
      .node(
        'audit',
        async (_s, ctx) => {
          running++;
          peak = Math.max(peak, running);
          await sleep(Math.random() * 3);
          running--;
          return { findings: [`${ctx.index}:${ctx.item}`] };
        },
        { writes: ['findings'] },
      )
      .node('collect', (s) => ({ log: [`collected ${s.findings.length}`] }))
      .map('list', { over: 'files', branch: 'audit', join: 'collect', concurrency: 4 })
      .edge('audit', 'collect')
      .edge('collect', END)
      .entry('list')
      .compile();
    const files = Array.from({ length: 100 }, (_, i) => `f${i}.ts`);

    const result = await run(g, { files });

    expect(result.status).toBe('succeeded');
    expect(peak).toBe(4);
    expect(result.state.findings).toEqual(files.map((f, i) => `${i}:${f}`));
    expect(result.state.log).toEqual(['collected 100']);
  });

  it('goes straight to the join when the list is empty', async () => {
    const g = graph('audit', { state: Audit, reducers: { findings: append } })
      .node('list', () => ({}))
      .node('audit', () => ({ findings: ['x'] }), { writes: ['findings'] })
      .node('collect', (_s, ctx) => ({ log: [JSON.stringify(ctx.join)] }))
      .map('list', { over: 'files', branch: 'audit', join: 'collect' })
      .edge('audit', 'collect')
      .edge('collect', END)
      .entry('list')
      .compile();
    const result = await run(g, { files: [] });
    expect(result.state.log).toEqual([
      JSON.stringify({ merged: [], succeeded: [], failed: [], cancelled: [] }),
    ]);
  });

  it('runs a loop containing a fan-out for 3 rounds without mixing tokens between rounds', async () => {
    const g = graph('rounds', { state: Audit, reducers: { findings: append, log: append } })
      .node('plan', (s) => ({ rounds: s.rounds + 1 }), { visits: 3 })
      .node(
        'audit',
        async (s, ctx) => {
          await jitter();
          return { findings: [`round ${s.rounds} item ${ctx.index}`] };
        },
        { writes: ['findings'] },
      )
      .node('collect', (s, ctx) => ({
        log: [`round ${s.rounds}: joined ${ctx.join?.merged.join(',')} of ${ctx.activationId}`],
      }))
      .map('plan', { over: 'files', branch: 'audit', join: 'collect' })
      .edge('audit', 'collect')
      .route('collect', (s) => (s.rounds < 3 ? 'plan' : END), ['plan', END])
      .entry('plan')
      .compile();

    const result = await run(g, { files: ['a', 'b'] });

    expect(result.status).toBe('succeeded');
    expect(result.state.log).toEqual([
      'round 1: joined 0,1 of collect:1',
      'round 2: joined 0,1 of collect:2',
      'round 3: joined 0,1 of collect:3',
    ]);
    expect(result.state.findings).toEqual([
      'round 1 item 0',
      'round 1 item 1',
      'round 2 item 0',
      'round 2 item 1',
      'round 3 item 0',
      'round 3 item 1',
    ]);
    const branchIds = result.trace.entries
      .filter((e) => e.node === 'audit')
      .map((e) => e.activation);
    expect(new Set(branchIds.map((id) => id.split('[')[0]))).toEqual(
      new Set(['plan:1', 'plan:2', 'plan:3']),
    );
  });

  it('fails with MAP_NOT_LIST when the field holds no list at run time', async () => {
    const Loose = z.object({ files: z.array(z.string()).nullable() });
    const g = graph('audit', { state: Loose })
      .node('list', () => ({}))
      .node('audit', () => ({}), { writes: [] })
      .node('collect', () => ({}))
      // A nullable list is refused by the types; JavaScript callers get the run-time check.
      .map('list', { over: 'files' as never, branch: 'audit', join: 'collect' })
      .edge('audit', 'collect')
      .edge('collect', END)
      .entry('list')
      .compile();
    const result = await run(g, { files: null });
    expect(result.status === 'failed' && result.error).toMatchObject({
      code: 'MAP_NOT_LIST',
      node: 'list',
    });
  });
});

describe('failed branches', () => {
  const flaky = (failing: readonly string[], tolerate?: number) =>
    graph('checks', { state: Audit, reducers: { findings: append } })
      .node('start', () => ({}))
      .node(
        'check',
        async (_s, ctx) => {
          await jitter();
          if (failing.includes(String(ctx.item))) throw new Error(`${ctx.item} is unreadable`);
          return { findings: [String(ctx.item)] };
        },
        { writes: ['findings'], timeoutMs: 1_000 },
      )
      .node(
        'collect',
        (_s, ctx) => ({ log: [`failed: ${ctx.join?.failed.map((f) => f.index)}`] }),
        {
          onError: 'report-failure',
          ...(tolerate !== undefined && { tolerate }),
        },
      )
      .node(
        'report-failure',
        (_s, ctx) => ({ log: [`${ctx.error?.code}: ${ctx.error?.message}`] }),
        {
          terminal: true,
        },
      )
      .map('start', { over: 'files', branch: 'check', join: 'collect' })
      .edge('check', 'collect')
      .edge('collect', END)
      .entry('start');

  it('fails fast under all(): the branch error becomes a value routed along the join onError', async () => {
    const result = await run(flaky(['b']).compile(), { files: ['a', 'b', 'c'] });

    expect(result.status).toBe('succeeded');
    expect(result.trace.path.at(-1)).toBe('report-failure');
    expect(result.state.log).toHaveLength(1);
    expect(result.state.log[0]).toMatch(
      /^JOIN_FAILED: join "collect" failed: 1 of 3 branches failed.*b is unreadable/,
    );
    expect(result.state.findings).toEqual([]); // nothing is merged from a failed join
    expect(result.errors.map((e) => e.code)).toEqual(['NODE_FAILED', 'JOIN_FAILED']);
  });

  it('with tolerate: 1, completes the join and records the failed branch', async () => {
    const result = await run(flaky(['b'], 1).compile(), { files: ['a', 'b', 'c'] });

    expect(result.status).toBe('succeeded');
    expect(result.state.findings).toEqual(['a', 'c']);
    expect(result.state.log).toEqual(['failed: 1']);
    expect(result.errors).toMatchObject([
      { code: 'NODE_FAILED', node: 'check', activation: 'start:1[1]/check:1' },
    ]);
  });

  it('never counts a timed-out branch as a success or as an empty result', async () => {
    const g = graph('slow', { state: Audit, reducers: { findings: append } })
      .node('start', () => ({}))
      .node(
        'check',
        async (_s, ctx) => {
          if (ctx.index === 1) await new Promise(() => undefined); // hangs, ignoring its signal
          return { findings: [String(ctx.item)] };
        },
        { writes: ['findings'], timeoutMs: 20 },
      )
      .node('collect', (_s, ctx) => ({ log: [JSON.stringify(ctx.join)] }), { tolerate: 1 })
      .map('start', { over: 'files', branch: 'check', join: 'collect' })
      .edge('check', 'collect')
      .edge('collect', END)
      .entry('start')
      .compile();

    const result = await run(g, { files: ['a', 'b'] });

    expect(result.state.findings).toEqual(['a']);
    const summary = JSON.parse(result.state.log[0]!);
    expect(summary.succeeded).toEqual([0]);
    expect(summary.failed).toMatchObject([
      { index: 1, error: { code: 'NODE_TIMEOUT', class: 'timeout' } },
    ]);
  });
});
