// A run you can follow, stop and pipe: its id as it starts, Ctrl-C that leaves it resumable,
// a closed pipe that stops the printing and not the run, the input from standard input; and
// what a run records about a failure, shown without its graph file.
import { spawn } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  bin,
  expectError,
  expectExit,
  fixture,
  type JsonLine,
  jsonLines,
  jsonOf,
  root,
  sandbox,
  testTimeoutMs,
} from './support.js';

const slow = fixture('slow.ts');

/**
 * Runs a program without blocking the test process (the tests run concurrently: a spawnSync
 * would hold up the others' event loop, and with it the Ctrl-C test's timing).
 */
function spawnAsync(
  command: string,
  args: readonly string[],
  options: { cwd: string; env?: NodeJS.ProcessEnv; input?: string },
): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, [...args], { cwd: options.cwd, env: options.env ?? process.env });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.on('error', reject);
    child.on('close', (status) => resolve({ status, stdout, stderr }));
    child.stdin.end(options.input ?? '');
  });
}
const version = (
  JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }
).version;

describe.concurrent('following a run', { timeout: testTimeoutMs }, () => {
  it('prints the run id as the run starts, before its first step', async () => {
    const box = sandbox();
    const out = await box.waymark(['run', slow, '--run-id', 's-1'], {
      env: { FIXTURE_STEP_MS: '10' },
    });
    expectExit(out, 0);
    expect(out.lines[0]).toBe(`run s-1 of graph "slow", checkpoints in ${box.db}`);
    expect(out.lines[1]).toBe('▶ one:1');
  });

  it('Ctrl-C: the process dies, saying the run is not cancelled and how to resume it; resume finishes it', async () => {
    const box = sandbox();
    const child = spawn(process.execPath, [bin, '--db', box.db, 'run', slow, '--run-id', 'c-1'], {
      cwd: box.dir,
      env: { ...process.env, NO_COLOR: '1', FIXTURE_STEP_MS: '400' },
    });
    let stdout = '';
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const ended = new Promise<string>((resolve) =>
      child.on('exit', (code, signal) => resolve(signal ?? `exit code ${code}: ${stderr}`)),
    );
    await new Promise<void>((resolve) =>
      child.stdout.on('data', (chunk: Buffer) => {
        stdout += chunk.toString();
        // Interrupted in the middle of the second step, the first one checkpointed.
        if (stdout.includes('▶ two:1')) resolve();
      }),
    );
    child.kill('SIGINT');
    expect(await ended).toBe('SIGINT');
    expect(stderr.trim().split('\n')).toEqual([
      'interrupted (Ctrl-C): run c-1 is not cancelled; every completed step is checkpointed and it can be resumed',
      `next:        waymark resume c-1 --db ${box.db}`,
    ]);
    const resumed = await box.waymark(['--json', 'resume', 'c-1'], {
      env: { FIXTURE_STEP_MS: '10' },
    });
    expectExit(resumed, 0);
    expect(jsonOf(resumed, 'resuming')).toMatchObject({ readBack: ['one:1'], toRun: ['two:1'] });
    expect(jsonOf(resumed, 'result')).toMatchObject({ status: 'succeeded', steps: 3 });
  });

  it('`waymark run ... | head -2` stops printing when the pipe closes, and the run goes on to the end', async () => {
    const box = sandbox();
    // A real pipe, made by a shell, into a reader that leaves after two lines.
    const command = `"${process.execPath}" "${bin}" --db "${box.db}" run "${slow}" --run-id p-1 | head -2; echo "waymark exited \${PIPESTATUS[0]}"`;
    const result = await spawnAsync('bash', ['-c', command], {
      cwd: box.dir,
      env: { ...process.env, NO_COLOR: '1', FIXTURE_STEP_MS: '200' },
    });
    expect(result.stdout.trim().split('\n')).toEqual([
      `run p-1 of graph "slow", checkpoints in ${box.db}`,
      '▶ one:1',
      'waymark exited 0',
    ]);
    expect(result.stderr).toBe('');
    const shown = jsonOf(await box.waymark(['--json', 'show', 'p-1']), 'run');
    expect(shown).toMatchObject({
      status: 'succeeded',
      steps: 3,
      state: { done: ['one', 'two', 'three'] },
    });
  });

  it('--input-file - reads the input from standard input', async () => {
    const box = sandbox();
    const result = await spawnAsync(
      process.execPath,
      [bin, '--db', box.db, '--json', 'run', fixture('review.ts'), '--input-file', '-'],
      { cwd: box.dir, input: '{"title":"From stdin"}' },
    );
    expect(result.status, result.stderr).toBe(3);
    const result_ = (
      result.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l)) as JsonLine[]
    ).find((v) => v.type === 'result');
    expect(result_?.waits).toEqual([
      expect.objectContaining({ prompt: 'Publish "From stdin (0 note(s) applied)"?' }),
    ]);
  });

  it('waymark --version prints the version, alone or after other options', async () => {
    const box = sandbox();
    const [alone, after] = await Promise.all([
      box.waymark(['--version'], { noDb: true }),
      box.waymark(['--json', '--version']),
    ]);
    for (const out of [alone, after]) {
      expectExit(out, 0);
      expect(out.stdout).toBe(`${version}\n`);
    }
  });
});

describe.concurrent('what a run records about a failure', { timeout: testTimeoutMs }, () => {
  it('show and trace print what the error was caused by; --verbose the stack; --json both', async () => {
    const box = sandbox();
    const failed = await box.waymark(['--json', 'run', fixture('caused.ts'), '--run-id', 'f-1']);
    expectExit(failed, 1);
    const result = jsonOf(failed, 'result') as unknown as {
      error: { stack: string; cause: { message: string; code: string } };
    };
    expect(result.error.stack).toMatch(/^Error: the webhook call failed\n\s+at (Object\.)?send /);
    expect(result.error.cause).toMatchObject({ message: 'socket hang up', code: 'ECONNRESET' });

    const [show, showVerbose, trace, traceVerbose, traceJson] = await Promise.all([
      box.waymark(['show', 'f-1']),
      box.waymark(['--verbose', 'show', 'f-1']),
      box.waymark(['trace', 'f-1']),
      box.waymark(['--verbose', 'trace', 'f-1']),
      box.waymark(['--json', 'trace', 'f-1']),
    ]);
    expect(show.stdout).toContain(
      '  send:1 attempt 1: NODE_FAILED (transient) the webhook call failed\n    caused by: ECONNRESET: socket hang up\n',
    );
    expect(show.stdout).not.toMatch(/^\s+at /m);
    expect(showVerbose.stdout).toMatch(
      /^ {4}Error: the webhook call failed\n {4}\s+at (Object\.)?send /m,
    );
    expect(trace.stdout).toMatch(
      /✗ send:1 \d+ ms NODE_FAILED: the webhook call failed\n\s+caused by: ECONNRESET: socket hang up\n/,
    );
    expect(trace.stdout).not.toMatch(/^\s+at /m);
    expect(traceVerbose.stdout).toMatch(/^\s+at (Object\.)?send /m);
    const entry = (jsonOf(traceJson, 'trace').entries as { error: Record<string, unknown> }[])[0]!;
    expect(entry.error).toMatchObject({
      code: 'NODE_FAILED',
      stack: expect.stringMatching(/^Error: the webhook call failed/),
      cause: { code: 'ECONNRESET', message: 'socket hang up' },
    });
  });

  it('a stopped run shows and traces without its graph file; a resume names the file to give', async () => {
    const box = sandbox();
    const zod = pathToFileURL(join(root, 'node_modules', 'zod', 'index.js')).href;
    const file = box.write(
      'review.ts',
      readFileSync(fixture('review.ts'), 'utf8')
        .replaceAll('../../../src/index.js', 'waymark')
        .replaceAll("'zod'", `'${zod}'`),
    );
    expectExit(await box.waymark(['run', file, '--input', '{"title":"T"}', '--run-id', 'g-1']), 3);
    rmSync(file);
    const [show, trace, resume] = await Promise.all([
      box.waymark(['--json', 'show', 'g-1']),
      box.waymark(['trace', 'g-1']),
      box.waymark(['resume', 'g-1']),
    ]);
    expectExit(show, 0);
    expect(jsonOf(show, 'run')).toMatchObject({ status: 'waiting', pending: ['review:1'] });
    expectExit(trace, 0);
    expect(trace.lines[0]).toBe('path: draft');
    expectError(resume, 'GRAPH_FILE_INVALID');
    expect(resume.errLines).toEqual([
      `error GRAPH_FILE_INVALID: there is no graph file ${file}`,
      `hint: the run recorded this file when it started; if the file moved, name it: \`waymark resume g-1 --graph '<graph-file>' --db ${box.db}\``,
    ]);
    expect(jsonLines(show)).toHaveLength(1);
  });
});
