import { existsSync } from 'node:fs';
import { join } from 'node:path';
// `waymark run` and `waymark resume`: starting a run, the input it takes, the files it refuses,
// and continuing a run that failed.
import { describe, expect, it } from 'vitest';
import {
  expectError,
  expectExit,
  expectJsonError,
  fixture,
  type JsonLine,
  jsonLines,
  jsonOf,
  sandbox,
  testTimeoutMs,
} from './support.js';

const review = fixture('review.ts');

describe.concurrent('waymark run', { timeout: testTimeoutMs }, () => {
  it('runs until a person is needed: exit 3, the path, the checkpoints and the question', async () => {
    const box = sandbox();
    const out = await box.waymark(['run', review, '--input', '{"title":"Hello"}']);
    expectExit(out, 3);
    expect(out.stdout).toContain('▶ draft:1');
    expect(out.stdout).toMatch(/✓ draft:1 \d+ ms/);
    expect(out.stdout).toMatch(/^run \S+ waiting after 1 step\(s\)$/m);
    expect(out.stdout).toContain('path:        draft');
    expect(out.stdout).toContain(`checkpoints: ${box.db}`);
    expect(out.stdout).toMatch(
      /waiting: +review asks "Publish "Hello \(0 note\(s\) applied\)"\?" \(request \S+\/review:1\)/,
    );
    // A yes-no question: the next command answers it as printed (test/cli/hints.test.ts runs it).
    expect(out.stdout).toContain(`next:        waymark approve`);
    expect(out.stderr).toBe('');
  });

  it('--json prints one JSON value per line: each attempt, then the result', async () => {
    const box = sandbox();
    const input = box.write('input.json', '{"title":"Hello"}');
    const out = await box.waymark([
      '--json',
      'run',
      review,
      '--input-file',
      input,
      '--run-id',
      'r-1',
    ]);
    expectExit(out, 3);
    const values = jsonLines(out) as JsonLine[];
    expect(values.map((v) => v.type)).toEqual([
      'run-started',
      'attempt-started',
      'attempt-ended',
      'result',
    ]);
    expect(values[0]).toEqual({ type: 'run-started', runId: 'r-1', graph: 'review', db: box.db });
    expect(values[1]).toMatchObject({ activation: 'draft:1', attempt: 1 });
    expect(values[2]).toMatchObject({ node: 'draft', activation: 'draft:1', status: 'succeeded' });
    const result = jsonOf(out, 'result');
    expect(Object.keys(result).sort()).toEqual([
      'db',
      'path',
      'runId',
      'status',
      'steps',
      'type',
      'waits',
    ]);
    expect(result).toMatchObject({
      runId: 'r-1',
      status: 'waiting',
      steps: 1,
      path: ['draft'],
      db: box.db,
    });
    expect(result.waits).toEqual([
      {
        requestId: 'r-1/review:1',
        node: 'review',
        prompt: 'Publish "Hello (0 note(s) applied)"?',
        schema: expect.objectContaining({ type: 'object', required: ['approved'] }),
        openedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      },
    ]);
  });

  it('--reuse reads back every step whose inputs match the named run; --quiet prints "<run-id> <status>"', async () => {
    const box = sandbox();
    const first = await box.waymark([
      '--quiet',
      'run',
      review,
      '--input',
      '{"title":"x"}',
      '--run-id',
      'first',
    ]);
    expectExit(first, 3);
    // --quiet prints only what a script needs.
    expect(first.stdout).toBe('first waiting\n');
    const out = await box.waymark([
      '--json',
      'run',
      review,
      '--input',
      '{"title":"x"}',
      '--reuse',
      'first',
    ]);
    expectExit(out, 3);
    const values = jsonLines(out) as JsonLine[];
    expect(values.map((v) => v.type)).toEqual(['run-started', 'attempt-ended', 'result']);
    expect(values[1]).toMatchObject({ activation: 'draft:1', reused: true });
    // The same --run-id twice is refused, and the first run is left alone.
    const again = await box.waymark([
      'run',
      review,
      '--input',
      '{"title":"x"}',
      '--run-id',
      'first',
    ]);
    expectError(again, 'RUN_EXISTS');
  });

  it('--reuse with no input starts from the input of the run it reuses: a fixed graph redoes the same work', async () => {
    const box = sandbox();
    expectExit(
      await box.waymark(['run', review, '--input', '{"title":"Kept"}', '--run-id', 'a']),
      3,
    );
    const out = await box.waymark(['--json', 'run', review, '--reuse', 'a', '--run-id', 'b']);
    expectExit(out, 3);
    const values = jsonLines(out) as JsonLine[];
    expect(values[1]).toMatchObject({ activation: 'draft:1', reused: true });
    expect(jsonOf(out, 'result').waits).toEqual([
      expect.objectContaining({ prompt: 'Publish "Kept (0 note(s) applied)"?' }),
    ]);
  });

  it('refuses input that does not match the state schema (INPUT_INVALID, exit 2) and records nothing', async () => {
    const box = sandbox();
    const out = await box.waymark(['--json', 'run', review, '--input', '{"title":""}']);
    const error = expectJsonError(out, 'INPUT_INVALID');
    expect(error.details).toEqual([expect.objectContaining({ path: ['title'] })]);
    const ls = await box.waymark(['--json', 'ls']);
    expect(jsonLines(ls)).toEqual([{ type: 'runs', db: box.db, runs: [] }]);
  });

  it('refuses a misspelled --input field (INPUT_INVALID, did you mean), never dropping it', async () => {
    const box = sandbox();
    const out = await box.waymark(['run', review, '--input', '{"title":"T","nots":["n"]}']);
    expectError(out, 'INPUT_INVALID', { lines: 'any' });
    expect(out.errLines[0]).toContain(
      'sets "nots" (did you mean "notes"?), which is not a state field',
    );
    const ls = await box.waymark(['--json', 'ls']);
    expect(jsonLines(ls)).toEqual([{ type: 'runs', db: box.db, runs: [] }]);
  });

  it('refuses input that is not JSON (USAGE_INVALID, exit 2)', async () => {
    const out = await sandbox().waymark(['run', review, '--input', '{title:']);
    expectError(out, 'USAGE_INVALID');
    expect(out.errLines[0]).toContain('--input is not valid JSON');
  });

  it('refuses --input and --input-file together', async () => {
    const out = await sandbox().waymark(['run', review, '--input', '{}', '--input-file', 'x.json']);
    expectError(out, 'USAGE_INVALID');
    expect(out.errLines[0]).toContain('not both');
  });

  it('refuses an unknown option', async () => {
    const out = await sandbox().waymark(['run', review, '--inptu', '{}']);
    expectError(out, 'USAGE_INVALID');
    expect(out.errLines[0]).toBe(
      "error USAGE_INVALID: unknown option '--inptu' (Did you mean --input?)",
    );
  });
});

describe.concurrent('waymark run on a file that is not a graph', { timeout: testTimeoutMs }, () => {
  it('a missing file: GRAPH_FILE_INVALID, exit 2', async () => {
    const box = sandbox();
    const out = await box.waymark(['run', 'no-such-graph.ts']);
    expectError(out, 'GRAPH_FILE_INVALID');
    expect(out.errLines[0]).toBe(
      'error GRAPH_FILE_INVALID: there is no graph file no-such-graph.ts',
    );
    // Not a hint about default exports: there is no file to export anything.
    expect(out.errLines[1]).toBe(
      `hint: check the path: nothing is at ${join(box.dir, 'no-such-graph.ts')}`,
    );
  });

  it('a misspelt file name: the hint names the module beside it that was meant', async () => {
    const box = sandbox();
    box.write('triage.ts', 'export default 1;\n');
    const out = await box.waymark(['run', './traige.ts']);
    expectError(out, 'GRAPH_FILE_INVALID');
    expect(out.errLines).toEqual([
      'error GRAPH_FILE_INVALID: there is no graph file ./traige.ts',
      'hint: did you mean ./triage.ts?',
    ]);
  });

  it('a module whose default export is not a graph', async () => {
    const out = await sandbox().waymark(['run', fixture('not-a-graph.ts')]);
    expectError(out, 'GRAPH_FILE_INVALID');
    expect(out.errLines[0]).toContain('has a default export of type object, not a graph');
  });

  it('a module that throws while it loads: its message, no stack trace', async () => {
    const out = await sandbox().waymark(['run', fixture('throws.ts')]);
    expectError(out, 'GRAPH_FILE_INVALID');
    expect(out.errLines[0]).toContain('does not load: the configuration service is unreachable');
  });

  it('a module with a syntax error', async () => {
    const box = sandbox();
    // Written at test time: a broken file in the repository would break typecheck and lint.
    const file = box.write('syntax.ts', "export default graph('x', {;\n");
    const out = await box.waymark(['run', file]);
    expectError(out, 'GRAPH_FILE_INVALID');
    expect(out.errLines[0]).toContain('syntax.ts does not load');
  });
});

describe.concurrent('waymark resume', { timeout: testTimeoutMs }, () => {
  it('continues a failed run: what completed is read back, only the failed step runs', async () => {
    const box = sandbox();
    const flaky = fixture('flaky.ts');
    const failed = await box.waymark(['run', flaky, '--run-id', 'f'], {
      env: { FIXTURE_FAIL: '1' },
    });
    expectExit(failed, 1);
    expect(failed.stdout).toMatch(/✗ work:1 \d+ ms NODE_FAILED: work is down/);
    expect(failed.stdout).toContain('run f failed after 1 step(s)');
    expect(failed.stdout).toContain('next:        waymark resume f');

    const out = await box.waymark(['--json', 'resume', 'f']);
    expectExit(out, 0);
    const values = jsonLines(out) as JsonLine[];
    expect(values.map((v) => v.type)).toEqual([
      'resuming',
      'attempt-started',
      'attempt-ended',
      'result',
    ]);
    expect(values[0]).toEqual({
      type: 'resuming',
      runId: 'f',
      status: 'failed',
      readBack: ['prepare:1'],
      toRun: ['work:1'],
    });
    expect(jsonOf(out, 'result')).toMatchObject({
      runId: 'f',
      status: 'succeeded',
      path: ['prepare', 'work'],
    });
  });

  it('refuses an unknown run id: RUN_NOT_FOUND, exit 2, and --json says the same', async () => {
    const box = sandbox();
    // The database exists, without that run (`ls` never creates one: a run does).
    expectExit(await box.waymark(['run', review, '--input', '{"title":"x"}']), 3);
    const out = await box.waymark(['resume', 'nope']);
    expectError(out, 'RUN_NOT_FOUND');
    expect(out.errLines[0]).toBe(`error RUN_NOT_FOUND: there is no run "nope" in ${box.db}`);
    expect(out.errLines[1]).toContain('waymark ls');
  });

  it('refuses a run id when there is no database at all, and does not create one to say so', async () => {
    const box = sandbox();
    const out = await box.waymark(['show', 'nope']);
    expectError(out, 'RUN_NOT_FOUND');
    expect(out.errLines[0]).toBe(
      `error RUN_NOT_FOUND: there is no run "nope": no database at ${box.db}`,
    );
    expect(existsSync(box.db)).toBe(false);
  });
});
