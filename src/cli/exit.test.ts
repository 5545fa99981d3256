import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { WaymarkError } from '../error/waymark-error.js';
import { internalCode, reportError } from './exit.js';
import { Io } from './io.js';

/** An Io over in-memory streams, and what it printed. */
function captured(flags: { json?: boolean; verbose?: boolean } = {}) {
  const text = { stdout: '', stderr: '' };
  const stream = (name: 'stdout' | 'stderr') => {
    const s = new PassThrough();
    s.on('data', (chunk: Buffer) => {
      text[name] += chunk.toString();
    });
    return s as unknown as NodeJS.WriteStream;
  };
  const io = new Io(
    { db: '.waymark/waymark.db', json: false, quiet: false, verbose: false, ...flags },
    {},
    { stdout: stream('stdout'), stderr: stream('stderr') },
  );
  return { io, text };
}

describe('reportError', () => {
  it('prints an error that is not a WaymarkError as INTERNAL, with how to report it: never without a code', () => {
    const { io, text } = captured();
    const code = reportError(
      io,
      new TypeError("Cannot read properties of undefined (reading 'x')"),
    );
    expect(code).toBe(1);
    expect(text.stderr.split('\n')).toEqual([
      `error ${internalCode}: Cannot read properties of undefined (reading 'x')`,
      'hint: this is a bug in waymark: run the command again with --verbose and report what it prints, with `waymark --version` (docs/errors.md, INTERNAL)',
      '',
    ]);
  });

  it('--json: the same as one error line on stdout, and --verbose adds the stack', () => {
    const json = captured({ json: true });
    reportError(json.io, new Error('boom'));
    expect(JSON.parse(json.text.stdout)).toEqual({
      type: 'error',
      code: internalCode,
      message: 'boom',
      hint: expect.stringContaining('report'),
      details: null,
    });
    const verbose = captured({ verbose: true });
    reportError(verbose.io, new Error('boom'));
    expect(verbose.text.stderr).toMatch(/^\s+at /m);
    expect(verbose.text.stderr.trimEnd().split('\n').at(-1)).toMatch(/^hint: /);
  });

  it('every code gets a hint line, also one the CLI has no special words for', () => {
    const { io, text } = captured();
    reportError(io, new WaymarkError('EXEC_DENIED', 'not allowed', { retryable: false }));
    expect(text.stderr).toBe(
      'error EXEC_DENIED: not allowed\nhint: docs/errors.md explains EXEC_DENIED\n',
    );
  });
});
