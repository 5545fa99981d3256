// Runs the real `waymark` binary as a child process, the way a user or a script does, against a
// database in a fresh temp directory. Nothing here imports src/cli: the tests see exactly the
// exit code, stdout and stderr a shell would.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, expect } from 'vitest';

/** The repository root, and the files the tests hand to the command. */
export const root = fileURLToPath(new URL('../../', import.meta.url));
export const bin = join(root, 'bin/waymark.js');
export const fixture = (name: string) => join(root, 'test/cli/fixtures', name);
export const example = (path: string) => join(root, 'examples', path);
/** tsx's loader, for `node --import` from a directory outside the repository (npm start's way). */
export const tsxLoader = pathToFileURL(createRequire(bin).resolve('tsx')).href;

/** Each command starts node and tsx (about half a second); a slow CI machine gets room. */
export const callTimeoutMs = 30_000;
/** The per-test timeout for a test that makes a few calls one after the other. */
export const testTimeoutMs = 60_000;

/** How one `waymark` call ended. */
export interface Outcome {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
  /** stdout's non-empty lines. */
  readonly lines: string[];
  /** stderr's non-empty lines. */
  readonly errLines: string[];
}

export interface CallOptions {
  readonly env?: Readonly<Record<string, string>>;
  readonly cwd?: string;
  /** Leave out `--db <sandbox>/waymark.db` (to see the default, or to pass another). */
  readonly noDb?: boolean;
}

/** A temp directory with its own database and CMS file, and a `waymark` bound to them. */
export interface Sandbox {
  readonly dir: string;
  readonly db: string;
  readonly cms: string;
  waymark(args: readonly string[], options?: CallOptions): Promise<Outcome>;
  /** Writes a file into the sandbox and returns its path. */
  write(name: string, text: string): string;
}

// Every sandbox a test file made goes when the file is done (not per test: under
// describe.concurrent the global onTestFinished may belong to another test).
const made: string[] = [];
afterAll(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/**
 * A fresh sandbox: call it in a test, or at the top of a file whose tests share runs on purpose.
 * Tests in different sandboxes touch different files, so they may run concurrently.
 */
export function sandbox(): Sandbox {
  const dir = mkdtempSync(join(tmpdir(), 'waymark-cli-'));
  made.push(dir);
  const db = join(dir, 'waymark.db');
  const cms = join(dir, 'cms.json');
  return {
    dir,
    db,
    cms,
    waymark: (args, options = {}) =>
      call(options.noDb ? args : ['--db', db, ...args], {
        cwd: options.cwd ?? dir,
        env: { WAYMARK_CMS_FILE: cms, ...options.env },
      }),
    write(name, text) {
      const path = join(dir, name);
      writeFileSync(path, text);
      return path;
    },
  };
}

/** Runs `node bin/waymark.js ...args` without a shell; never rejects, whatever the exit code. */
export function call(
  args: readonly string[],
  options: { cwd: string; env: Readonly<Record<string, string>> },
): Promise<Outcome> {
  return node([bin, ...args], options);
}

/** Runs `node ...args` (no shell) and collects how it ended. */
export function node(
  args: readonly string[],
  options: { cwd: string; env: Readonly<Record<string, string>> },
): Promise<Outcome> {
  // A developer's own WAYMARK_FAULTS or colours must not leak into the tests.
  const { WAYMARK_FAULTS: _faults, FORCE_COLOR: _force, ...inherited } = process.env;
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [...args],
      {
        cwd: options.cwd,
        env: { ...inherited, NO_COLOR: '1', ...options.env },
        timeout: callTimeoutMs,
        maxBuffer: 16 * 1024 * 1024,
      },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : error.code;
        if (typeof code !== 'number') {
          reject(
            new Error(`waymark ${args.join(' ')} did not exit (${error?.message})\n${stderr}`),
          );
          return;
        }
        resolve({ code, stdout, stderr, lines: nonEmpty(stdout), errLines: nonEmpty(stderr) });
      },
    );
  });
}

function nonEmpty(text: string): string[] {
  return text.split('\n').filter((l) => l.trim() !== '');
}

/** A JSON value the command printed with --json, by its `type`. */
export type JsonLine = { readonly type: string } & Record<string, unknown>;

/**
 * Every stdout line of a `--json` call parsed as JSON: each line must be one JSON value, so a
 * stray human line fails the test here.
 */
export function jsonLines(outcome: Outcome): unknown[] {
  return outcome.lines.map((line) => {
    try {
      return JSON.parse(line) as unknown;
    } catch {
      throw new Error(`not a JSON line on stdout: ${line}\n--- stderr:\n${outcome.stderr}`);
    }
  });
}

/** The one JSON line of `type`, with every line checked to be JSON. */
export function jsonOf(outcome: Outcome, type: string): JsonLine {
  const found = (jsonLines(outcome) as JsonLine[]).filter((v) => v.type === type);
  expect(found, `one "${type}" line in:\n${outcome.stdout}`).toHaveLength(1);
  return found[0]!;
}

/** Asserts the exit code, showing the whole output when it is not the one expected. */
export function expectExit(outcome: Outcome, code: number): void {
  expect(outcome.code, `exit code; stdout:\n${outcome.stdout}\nstderr:\n${outcome.stderr}`).toBe(
    code,
  );
}

/**
 * Asserts how the CLI reports an error without --json: exit 2 (unless told), `error <CODE>: ...`
 * as the first stderr line, `hint: ...` as the last, no stack trace, and with `lines` (the
 * default 2; 'any' for a message that lists things) the exact number of stderr lines.
 */
export function expectError(
  outcome: Outcome,
  code: string,
  { exit = 2, lines = 2 }: { exit?: number; lines?: number | 'any' } = {},
): void {
  expectExit(outcome, exit);
  const { errLines } = outcome;
  expect(errLines[0]).toMatch(new RegExp(`^error ${code}: \\S`));
  expect(errLines.at(-1)).toMatch(/^hint: \S/);
  if (lines !== 'any') expect(errLines, outcome.stderr).toHaveLength(lines);
  expect(outcome.stderr).not.toMatch(/^\s+at /m);
}

/**
 * Asserts a `--json` error: exit 2 (unless told), one `{type:'error', code, message, hint}` on
 * stdout, and nothing on stderr.
 */
export function expectJsonError(outcome: Outcome, code: string, exit = 2): JsonLine {
  expectExit(outcome, exit);
  const error = jsonOf(outcome, 'error');
  expect(error).toMatchObject({ code, message: expect.any(String) });
  expect(error.message).not.toMatch(new RegExp(`^${code}`));
  expect(outcome.stderr).toBe('');
  return error;
}

/** The events of a run's stream as `waymark watch --no-follow --json` prints them. */
export function streamEventsOf(outcome: Outcome): JsonLine[] {
  return (jsonLines(outcome) as JsonLine[])
    .filter((l) => l.type === 'stream-event')
    .map((l) => l.event as JsonLine);
}

/** Runs the review fixture to its first wait, as run `runId`: the waiting run many tests start from. */
export async function reviewWaiting(box: Sandbox, runId: string): Promise<void> {
  expectExit(
    await box.waymark(['run', fixture('review.ts'), '--input', '{"title":"T"}', '--run-id', runId]),
    3,
  );
}
