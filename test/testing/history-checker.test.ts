import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { all, answer, append, graph, MemoryStore, person, resume, run } from '../../src/index.js';
import {
  checkHistory,
  checkRecordedHistory,
  type ExecutionRecord,
  executionLine,
  historyRules,
  parseExecutionLog,
  type RecordedHistory,
  type RecordedRun,
  readHistory,
} from '../../src/testing/index.js';

// The history checker reads what a store recorded and what a harness logged of the bodies it ran,
// and names every place where the two break one of waymark's promises. A real run, logged, passes;
// each rule is then broken by hand on a copy of that history, one at a time.

const State = z.object({
  topics: z.array(z.string()).default([]),
  notes: z.array(z.string()).default([]),
  receipt: z.string().default(''),
  approved: z.boolean().default(false),
});

/** A map over three topics, a join, a person's approval and an effect: every rule has something to look at. */
function review(log: ExecutionRecord[], applied: Map<string, string>) {
  const started = (ctx: { runId: string; activationId: string; attempt: number }) =>
    log.push({
      type: 'attempt',
      runId: ctx.runId,
      activation: ctx.activationId,
      attempt: ctx.attempt,
      holder: 'test',
      at: Date.now(),
    });
  return graph('history-review', { state: State, reducers: { notes: append } })
    .node('plan', (_s, ctx) => {
      started(ctx);
      return { topics: ['a', 'b', 'c'] };
    })
    .node(
      'research',
      (_s, ctx) => {
        started(ctx);
        return { notes: [`on ${String(ctx.item)}`] };
      },
      { writes: ['notes'] },
    )
    .node('merge', () => ({}), { join: all() })
    .node(
      'approve',
      person({ prompt: () => 'Publish?', answer: z.object({ approved: z.boolean() }) }),
    )
    .node(
      'publish',
      async (_s, ctx) => {
        started(ctx);
        const receipt = await ctx.effect('post', async (key) => {
          // The receiver: applies a key once, and answers the receipt it gave the first time.
          if (!applied.has(key)) {
            applied.set(key, `receipt-${applied.size + 1}`);
            log.push({
              type: 'effect',
              key,
              result: JSON.stringify(applied.get(key)),
              at: Date.now(),
            });
          }
          return applied.get(key)!;
        });
        return { receipt };
      },
      { terminal: true },
    )
    .map('plan', { over: 'topics', branch: 'research', join: 'merge' })
    .edge('research', 'merge')
    .edge('merge', 'approve')
    .edge('approve', 'publish')
    .entry('plan')
    .compile();
}

/** Two runs of the review graph: one answered and finished, one left waiting with a mid-run snapshot. */
async function recorded() {
  const store = new MemoryStore();
  const log: ExecutionRecord[] = [];
  const g = review(log, new Map());
  await run(g, {}, { store, runId: 'done' });
  await answer(store, 'done', 'done/approve:1', { approved: true }, { by: 'ana' });
  await resume(store, g, 'done');
  await run(g, {}, { store, runId: 'waiting', snapshotEvery: 2 });
  log.push({ type: 'lease', runId: 'done', holder: 'test', epoch: 1, at: Date.now() });
  return { store, log, g, history: await readHistory(store) };
}

/** A copy of the history with one run changed. */
function withRun(
  history: RecordedHistory,
  runId: string,
  change: (r: RecordedRun) => RecordedRun,
): RecordedHistory {
  return { runs: history.runs.map((r) => (r.run.id === runId ? change(r) : r)) };
}

function eventsOf(r: RecordedRun) {
  return r.events.map((e) => ({ ...e, parsed: JSON.parse(e.event) as Record<string, unknown> }));
}

describe('the history checker', () => {
  it('passes a history that keeps every promise, and says what it looked at', async () => {
    const { store, log, g } = await recorded();
    const report = await checkHistory(store, { log, graphs: [g] });
    expect(report.violations).toEqual([]);
    expect(report.ok).toBe(true);
    expect(report.checked).toMatchObject({ runs: 2, replayed: 2 });
    expect(report.checked.attempts).toBe(log.filter((r) => r.type === 'attempt').length);
    expect(report.notReplayed).toEqual([]);
    // The waiting run's newest snapshot is mid-run: the replay really compared a checkpoint.
    const waiting = (await readHistory(store, ['waiting'])).runs[0]!;
    expect(waiting.latest!.seq).toBeGreaterThan(0);
  });

  it('without the graphs it checks everything but the replay, and says which runs it did not replay', async () => {
    const { store, log } = await recorded();
    const report = await checkHistory(store, { log });
    expect(report.ok).toBe(true);
    expect(report.notReplayed.map((n) => n.reason)).toEqual(['no-graph', 'no-graph']);
  });

  it('names every rule it checks, and each test below breaks one of them', () => {
    expect([...historyRules].sort()).toEqual(
      [
        'sequence',
        'unreadable',
        'completed-twice',
        'started-after-completion',
        'epoch-shared',
        'effect-applied-twice',
        'effect-result-differs',
        'wait-answered-twice',
        'replay-differs',
      ].sort(),
    );
  });

  it('fails an activation completed twice', async () => {
    const { history, log, g } = await recorded();
    const broken = withRun(history, 'done', (r) => {
      const plan = r.events.find((e) => e.event.includes('"plan:1"'))!;
      const events = [...r.events, { ...plan, seq: r.events.length + 1 }];
      return { ...r, events, run: { ...r.run, seq: events.length } };
    });
    const report = checkRecordedHistory(broken, { log, graphs: [g] });
    expect(report.ok).toBe(false);
    expect(report.violations.map((v) => v.rule)).toContain('completed-twice');
    expect(report.violations.find((v) => v.rule === 'completed-twice')).toMatchObject({
      runId: 'done',
      activation: 'plan:1',
    });
  });

  it('fails a body that started after its completion was committed', async () => {
    const { history, log } = await recorded();
    const completed = eventsOf(history.runs.find((r) => r.run.id === 'done')!).find(
      (e) => e.parsed.activation === 'publish:1',
    )!;
    const late: ExecutionRecord = {
      type: 'attempt',
      runId: 'done',
      activation: 'publish:1',
      attempt: 1,
      holder: 'worker-2',
      at: completed.at + 500,
    };
    const report = checkRecordedHistory(history, { log: [...log, late] });
    expect(report.violations).toEqual([
      expect.objectContaining({ rule: 'started-after-completion', activation: 'publish:1' }),
    ]);
    expect(report.violations[0]!.message).toContain('worker-2 500 ms after');
    // Within the clock skew allowed, it is not a violation.
    expect(checkRecordedHistory(history, { log: [...log, late], skewMs: 1_000 }).ok).toBe(true);
  });

  it('fails two holders at one lease epoch, of a run or of a task', async () => {
    const { history, log } = await recorded();
    const at = Date.now();
    const report = checkRecordedHistory(history, {
      log: [
        ...log,
        { type: 'lease', runId: 'done', holder: 'worker-2', epoch: 1, at },
        {
          type: 'attempt',
          runId: 'done',
          activation: 'plan:1',
          attempt: 1,
          holder: 'a',
          epoch: 3,
          at: 0,
        },
        { type: 'lease', runId: 'done', activation: 'plan:1', holder: 'b', epoch: 3, at: 0 },
        // Another epoch of the same task, another holder: a takeover, which is allowed.
        { type: 'lease', runId: 'done', activation: 'plan:1', holder: 'c', epoch: 4, at: 0 },
      ],
    });
    expect(report.violations.map((v) => [v.rule, v.activation])).toEqual([
      ['epoch-shared', undefined],
      ['epoch-shared', 'plan:1'],
    ]);
    expect(report.violations[0]!.message).toBe(
      'run "done": its lease was held at epoch 1 by test and worker-2',
    );
  });

  it('fails an effect key applied twice, and a run that recorded another result than the one applied', async () => {
    const { history, log } = await recorded();
    const effect = log.find((r) => r.type === 'effect')!;
    const twice = checkRecordedHistory(history, {
      log: [...log, { ...effect, at: effect.at + 1 }],
    });
    expect(twice.violations.map((v) => v.rule)).toEqual(['effect-applied-twice']);
    expect(twice.violations[0]!.runId).toBe('done');
    const other = checkRecordedHistory(history, {
      log: log.map((r) => (r.type === 'effect' ? { ...r, result: '"receipt-9"' } : r)),
    });
    expect(other.violations.map((v) => v.rule)).toEqual(['effect-result-differs']);
  });

  it('fails a wait answered twice, and an answer applied to a wait the store does not hold answered', async () => {
    const { history, log } = await recorded();
    const answeredTwice = withRun(history, 'done', (r) => {
      const answered = r.events.find((e) => e.event.includes('"answered"'))!;
      const events = [...r.events, { ...answered, seq: r.events.length + 1 }];
      return { ...r, events, run: { ...r.run, seq: events.length } };
    });
    expect(checkRecordedHistory(answeredTwice, { log }).violations.map((v) => v.rule)).toEqual([
      'wait-answered-twice',
    ]);
    const unanswered = withRun(history, 'done', (r) => ({
      ...r,
      waits: r.waits.map((w) => ({ ...w, answer: null })),
    }));
    const report = checkRecordedHistory(unanswered, { log });
    expect(report.violations.map((v) => v.rule)).toEqual(['wait-answered-twice']);
    expect(report.violations[0]!.message).toContain('holds no answer to it');
  });

  it('fails a kept snapshot that is not a replay of the events before it', async () => {
    const { history, log, g } = await recorded();
    const tampered = withRun(history, 'waiting', (r) => {
      const data = JSON.parse(r.latest!.data) as { state: { topics: string[] } };
      data.state.topics = ['a', 'b', 'x'];
      return { ...r, latest: { ...r.latest!, data: JSON.stringify(data) } };
    });
    const report = checkRecordedHistory(tampered, { log, graphs: [g] });
    expect(report.violations.map((v) => [v.rule, v.runId])).toEqual([
      ['replay-differs', 'waiting'],
    ]);
    expect(report.violations[0]!.message).toContain(
      'differs from a replay of the events before it',
    );
    // A status the events do not lead to is a replay that differs too.
    const status = withRun(history, 'done', (r) => ({ ...r, run: { ...r.run, status: 'failed' } }));
    expect(checkRecordedHistory(status, { log, graphs: [g] }).violations[0]!.message).toContain(
      'replay to status succeeded, the store says failed',
    );
    // A run with no snapshot at seq 0 cannot be replayed: that is a violation, not a skip.
    const missing = withRun(history, 'done', (r) => ({ ...r, first: undefined }));
    expect(checkRecordedHistory(missing, { log, graphs: [g] }).violations[0]!.message).toContain(
      'no snapshot at seq 0',
    );
  });

  it('fails a gap in the events, a repeated seq, and an event that is not one', async () => {
    const { history, log } = await recorded();
    const gap = withRun(history, 'done', (r) => ({
      ...r,
      events: r.events.filter((e) => e.seq !== 2),
    }));
    expect(checkRecordedHistory(gap, { log }).violations.map((v) => v.rule)).toContain('sequence');
    const unreadable = withRun(history, 'done', (r) => ({
      ...r,
      events: r.events.map((e) => (e.seq === 1 ? { ...e, event: '{"typ' } : e)),
    }));
    expect(checkRecordedHistory(unreadable, { log }).violations.map((v) => v.rule)).toEqual([
      'unreadable',
    ]);
  });

  it('reads an execution log many processes appended to, leaving out a torn last line', () => {
    const lines =
      executionLine({ type: 'lease', runId: 'r', holder: 'w1', epoch: 1, at: 1 }) +
      executionLine({ type: 'effect', key: 'r/a:1/post', at: 2 }) +
      '{"type":"attempt","runId":"r","activ';
    const { records, torn } = parseExecutionLog(lines);
    expect(records.map((r) => r.type)).toEqual(['lease', 'effect']);
    expect(torn).toBe(1);
  });
});

describe('docs/testing.md', () => {
  it('runs its history checker example against a store with a logged run', async () => {
    const doc = readFileSync(new URL('../../docs/testing.md', import.meta.url), 'utf8');
    const example = [...doc.matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((m) => m[1]!)[0]!;
    const { store, log, g } = await recorded();
    const logFile = join(mkdtempSync(join(tmpdir(), 'waymark-history-')), 'executions.log');
    writeFileSync(logFile, log.map(executionLine).join(''));
    const body = example.replace(/^import .*$/gm, '');
    const AsyncFunction = Object.getPrototypeOf(async () => {}).constructor as new (
      ...args: string[]
    ) => (...values: unknown[]) => Promise<void>;
    const names = [
      'checkHistory',
      'parseExecutionLog',
      'readFileSync',
      'logFile',
      'store',
      'review',
    ];
    const values = [checkHistory, parseExecutionLog, readFileSync, logFile, store, g];
    await new AsyncFunction(...names, body)(...values);
    // The same example throws on a history that breaks a rule.
    writeFileSync(
      logFile,
      [...log, { type: 'lease', runId: 'done', holder: 'other', epoch: 1, at: 0 } as const]
        .map(executionLine)
        .join(''),
    );
    await expect(new AsyncFunction(...names, body)(...values)).rejects.toThrow(
      'held at epoch 1 by test and other',
    );
  });
});
