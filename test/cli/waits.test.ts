// `waymark answer`, `approve`, `reject`, `cancel` and `rewind`: what a person does to a run that
// waits, and how a run is stopped or started over. fixtures/review.ts asks a yes-no question
// (review) and then a number (rate).
import { describe, expect, it } from 'vitest';
import {
  expectError,
  expectExit,
  fixture,
  type JsonLine,
  jsonLines,
  jsonOf,
  sandbox,
  testTimeoutMs,
} from './support.js';

const review = fixture('review.ts');

/** `show --json` of a run. */
async function show(box: ReturnType<typeof sandbox>, runId: string) {
  const out = await box.waymark(['--json', 'show', runId]);
  expectExit(out, 0);
  return jsonOf(out, 'run') as unknown as {
    status: string;
    state: Record<string, unknown>;
    waits: {
      open: { requestId: string }[];
      answered: { node: string; answer: unknown; by: string }[];
    };
  };
}

describe.concurrent('waymark answer', { timeout: testTimeoutMs }, () => {
  it('checks the answer, records it once, and continues the run', async () => {
    const box = sandbox();
    expectExit(await box.waymark(['run', review, '--input', '{"title":"T"}', '--run-id', 'a']), 3);

    const invalid = await box.waymark(['answer', 'a', '--value', '{"approved":"yes"}']);
    expectError(invalid, 'ANSWER_INVALID', { lines: 'any' });
    expect(invalid.stderr).toContain('approved');

    const unknown = await box.waymark([
      'answer',
      'a',
      '--request',
      'a/nope',
      '--value',
      '{"approved":true}',
    ]);
    expectError(unknown, 'WAIT_NOT_FOUND');
    expect(unknown.errLines[0]).toBe('error WAIT_NOT_FOUND: run "a" has no wait "a/nope"');

    // The refused answers recorded nothing: this one is the first, and it stands.
    const out = await box.waymark([
      '--json',
      'answer',
      'a',
      '--value',
      '{"approved":true}',
      '--by',
      'ed',
    ]);
    expectExit(out, 3);
    const values = jsonLines(out) as JsonLine[];
    expect(values[0]).toEqual({
      type: 'answered',
      runId: 'a',
      requestId: 'a/review:1',
      node: 'review',
      answer: { approved: true },
      by: 'ed',
      answeredAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    });
    expect(values[1]).toMatchObject({
      type: 'resuming',
      readBack: ['draft:1'],
      toRun: ['review:1'],
    });
    expect(jsonOf(out, 'result')).toMatchObject({
      status: 'waiting',
      path: ['draft', 'review'],
      waits: [{ requestId: 'a/rate:1', node: 'rate', prompt: 'How many stars?' }],
    });

    const second = await box.waymark([
      'answer',
      'a',
      '--request',
      'a/review:1',
      '--value',
      '{"approved":false}',
    ]);
    expectError(second, 'WAIT_ALREADY_ANSWERED');
    expect(second.errLines[0]).toContain('answered by ed already');

    // `rate` asks for a number, not a yes or no: approve refuses it and records nothing.
    const approve = await box.waymark(['approve', 'a']);
    expectError(approve, 'USAGE_INVALID');
    expect(approve.errLines[0]).toContain('"rate" does not ask a yes-no question');

    // --no-resume records the answer only: the run waits until `waymark resume`.
    const recorded = await box.waymark([
      'answer',
      'a',
      '--value',
      '{"stars":4}',
      '--no-resume',
      '--by',
      'al',
    ]);
    expectExit(recorded, 0);
    expect(recorded.lines).toEqual([
      'recorded the answer to rate (request a/rate:1) by al',
      // --db was given, so the next command names it too: it runs as printed.
      `next: waymark resume a --db ${box.db}`,
    ]);
    const before = await show(box, 'a');
    expect(before.status).toBe('waiting');
    expect(before.waits.open).toEqual([]);
    expect(before.waits.answered).toMatchObject([
      { node: 'review', answer: { approved: true }, by: 'ed' },
      { node: 'rate', answer: { stars: 4 }, by: 'al' },
    ]);

    const resumed = await box.waymark(['resume', 'a']);
    expectExit(resumed, 0);
    expect(resumed.stdout).toContain(
      '2 completed step(s) read back from the checkpoints, not run again: draft:1, review:1',
    );
    expect(resumed.stdout).toMatch(/^run a succeeded after 4 step\(s\)$/m);
  });
});

describe.concurrent('waymark approve and reject', { timeout: testTimeoutMs }, () => {
  it('reject --note records a "no" whose note reaches the state', async () => {
    const box = sandbox();
    expectExit(
      await box.waymark(['--quiet', 'run', review, '--input', '{"title":"T"}', '--run-id', 'r']),
      3,
    );
    const out = await box.waymark([
      '--quiet',
      'reject',
      'r',
      '--note',
      'the title is too long',
      '--by',
      'ed',
    ]);
    expectExit(out, 3);
    expect(out.stdout).toBe('r waiting\n');
    const run = await show(box, 'r');
    expect(run.state).toMatchObject({ approved: false, notes: ['the title is too long'] });
    expect(run.waits.answered).toMatchObject([
      { node: 'review', answer: { approved: false, note: 'the title is too long' }, by: 'ed' },
    ]);
  });
});

describe.concurrent('waymark cancel', { timeout: testTimeoutMs }, () => {
  it('cancels a waiting run for good: no resume, no answer, no second cancel', async () => {
    const box = sandbox();
    expectExit(
      await box.waymark(['--quiet', 'run', review, '--input', '{"title":"T"}', '--run-id', 'c']),
      3,
    );
    const out = await box.waymark(['--json', 'cancel', 'c', '--reason', 'the release was pulled']);
    expectExit(out, 0);
    expect(jsonLines(out)).toEqual([{ type: 'cancelled', runId: 'c', status: 'cancelled' }]);

    const resume = await box.waymark(['resume', 'c']);
    expectError(resume, 'RUN_NOT_RESUMABLE');
    expect(resume.stdout).toBe('');

    const approve = await box.waymark(['approve', 'c']);
    expectError(approve, 'RUN_NOT_RESUMABLE');

    const again = await box.waymark(['cancel', 'c']);
    expectError(again, 'RUN_NOT_CANCELLABLE');

    const run = await show(box, 'c');
    expect(run.status).toBe('cancelled');
    expect(run.waits.answered).toEqual([]);
  });

  it('hints a rewind to the node the cancelled run stood at, not to a failure it handled before', async () => {
    const box = sandbox();
    expectExit(await box.waymark(['--quiet', 'run', fixture('handled.ts'), '--run-id', 'h']), 3);
    expectExit(await box.waymark(['cancel', 'h']), 0);
    const resume = await box.waymark(['resume', 'h']);
    expectError(resume, 'RUN_NOT_RESUMABLE');
    expect(resume.stderr).toMatch(/`waymark rewind h --to ask[ `]/);
    expect(resume.stderr).not.toMatch(/--to lookup/);
    // And the hinted command works.
    expectExit(await box.waymark(['--quiet', 'rewind', 'h', '--to', 'ask', '--run-id', 'h2']), 3);
  });
});

describe.concurrent('waymark rewind', { timeout: testTimeoutMs }, () => {
  it('starts a new run before a node with --note appended to a list field', async () => {
    const box = sandbox();
    expectExit(
      await box.waymark(['--quiet', 'run', review, '--input', '{"title":"T"}', '--run-id', 'w']),
      3,
    );
    const out = await box.waymark([
      '--json',
      'rewind',
      'w',
      '--to',
      'draft',
      '--note',
      'shorter',
      '--run-id',
      'w2',
    ]);
    expectExit(out, 3);
    expect(jsonOf(out, 'result')).toMatchObject({
      runId: 'w2',
      status: 'waiting',
      path: ['draft'],
    });
    const fresh = (jsonLines(out) as JsonLine[]).filter((v) => v.type === 'attempt-ended');
    // The note changed draft's input: it runs again instead of being read back.
    expect(fresh).toMatchObject([{ activation: 'draft:1', status: 'succeeded' }]);
    expect(fresh[0]!.reused).toBeUndefined();

    const run = await show(box, 'w2');
    expect(run.state).toMatchObject({ notes: ['shorter'], draft: 'T (1 note(s) applied)' });

    const unknown = await box.waymark(['rewind', 'w', '--to', 'nowhere']);
    expectError(unknown, 'OPTIONS_INVALID', { lines: 'any' });
    expect(unknown.errLines[0]).toContain('has no node "nowhere"');
  });

  // Rewind replays the whole history, the recorded answer included.
  it('rewinds a run after an editor rejected it', async () => {
    const box = sandbox();
    expectExit(
      await box.waymark(['--quiet', 'run', review, '--input', '{"title":"T"}', '--run-id', 'x']),
      3,
    );
    expectExit(await box.waymark(['--quiet', 'reject', 'x', '--note', 'no']), 3);
    const out = await box.waymark(['rewind', 'x', '--to', 'draft', '--note', 'shorter']);
    expectExit(out, 3);
  });
});
