// What every command shares: --help with an example, and how errors are printed.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  expectError,
  expectExit,
  expectJsonError,
  fixture,
  sandbox,
  testTimeoutMs,
} from './support.js';

const commands = [
  'validate',
  'graph',
  'run',
  'resume',
  'continue',
  'answer',
  'approve',
  'reject',
  'cancel',
  'patch',
  'rewind',
  'ls',
  'show',
  'watch',
  'serve',
  'trace',
];

describe.concurrent('waymark --help', { timeout: testTimeoutMs }, () => {
  it('lists every command, the exit codes and an example', async () => {
    const out = await sandbox().waymark(['--help']);
    expectExit(out, 0);
    for (const command of commands) expect(out.stdout).toMatch(new RegExp(`^  ${command} `, 'm'));
    expect(out.stdout).toContain('Exit codes: 0 succeeded, 3 waiting');
    expect(out.stdout).toContain('Example:');
  });

  it('every command has --help with an "Example:" and exits 0', async () => {
    const box = sandbox();
    // Independent calls that touch no database: run side by side.
    const outs = await Promise.all(commands.map((c) => box.waymark([c, '--help'])));
    for (const [i, out] of outs.entries()) {
      expectExit(out, 0);
      expect(out.stdout, commands[i]).toMatch(new RegExp(`^Usage: waymark ${commands[i]} `));
      expect(out.stdout, commands[i]).toMatch(/\nExample:\n {2}\$ waymark /);
    }
  });

  it('no command at all prints the help on stderr and exits 2', async () => {
    const out = await sandbox().waymark([]);
    expectExit(out, 2);
    expect(out.stdout).toBe('');
    expect(out.stderr).toMatch(/^Usage: waymark /);
    expect(out.stderr).not.toMatch(/^error /m);
  });
});

describe.concurrent('errors', { timeout: testTimeoutMs }, () => {
  it('an unknown command: one error line, one hint line, exit 2', async () => {
    const out = await sandbox().waymark(['frobnicate']);
    expectError(out, 'USAGE_INVALID');
    expect(out.errLines).toEqual([
      "error USAGE_INVALID: unknown command 'frobnicate'",
      // A hint names a command that can be run as printed: the list of commands.
      'hint: `waymark --help` lists the commands',
    ]);
    expect(out.stdout).toBe('');
  });

  it('a missing argument or required option is a usage error', async () => {
    const box = sandbox();
    const [noFile, noValue] = await Promise.all([
      box.waymark(['run']),
      box.waymark(['answer', 'some-run']),
    ]);
    expectError(noFile, 'USAGE_INVALID');
    expect(noFile.errLines[0]).toContain("missing required argument 'graph-file'");
    expectError(noValue, 'USAGE_INVALID');
    expect(noValue.errLines[0]).toContain("'--value <json>' not specified");
  });

  it('--verbose adds the stack trace', async () => {
    const out = await sandbox().waymark(['--verbose', 'run', fixture('not-a-graph.ts')]);
    expectExit(out, 2);
    expect(out.errLines[0]).toMatch(/^error GRAPH_FILE_INVALID: /);
    expect(out.stderr).toMatch(/^\s+at .*load-graph\.ts/m);
  });

  it('--json prints the error as one JSON value on stdout, nothing on stderr', async () => {
    const box = sandbox();
    const out = await box.waymark(['--json', 'run', 'missing.ts']);
    const error = expectJsonError(out, 'GRAPH_FILE_INVALID');
    expect(error).toMatchObject({
      message: 'there is no graph file missing.ts',
      hint: `check the path: nothing is at ${join(box.dir, 'missing.ts')}`,
    });
    expect(out.stderr).toBe('');
  });
});
