import type { ErrorCode } from '../error/codes.js';
import { isWaymarkError } from '../error/waymark-error.js';
import type { Diagnostic } from '../graph/diagnostic.js';
import type { RunStatus } from '../runtime/core/snapshot.js';
import type { Io } from './io.js';

/** The `waymark` command's exit codes; docs/cli.md documents them. */
export const exitCode = {
  succeeded: 0,
  /** The run failed, timed out or was cancelled (or the graph file's validation failed). */
  failed: 1,
  /** Usage or input the command could not act on: nothing was run or recorded. */
  usage: 2,
  /** The run waits for a person. */
  waiting: 3,
} as const;

/** The exit code for how a run stands. */
export function exitCodeOf(status: RunStatus): number {
  switch (status) {
    case 'succeeded':
      return exitCode.succeeded;
    case 'waiting':
      return exitCode.waiting;
    case 'running':
    case 'failed':
    case 'cancelled':
    case 'timed_out':
      return exitCode.failed;
  }
}

// What to do next, per code: the one line under the error. The message says what happened.
const hints: Partial<Record<ErrorCode, string>> = {
  USAGE_INVALID: 'see `waymark <command> --help` for the arguments and an example',
  GRAPH_FILE_INVALID:
    'the file must be a .ts or .js module whose default export is a graph: `export default graph(...)...compile()`',
  GRAPH_INVALID: 'fix each problem listed above; `waymark validate <file>` checks again',
  INPUT_INVALID: "the input must match the graph's state schema",
  RUN_NOT_FOUND: 'list the runs in this database with `waymark ls` (or name another with --db)',
  RUN_EXISTS: 'choose another --run-id, or leave it out for a fresh one',
  RUN_NOT_RESUMABLE:
    '`waymark show <run-id>` says how it stopped; `waymark rewind <run-id> --to <node>` starts over from a node',
  RUN_NOT_CANCELLABLE: 'the run is over already; `waymark show <run-id>` shows how it ended',
  WAIT_NOT_FOUND: '`waymark show <run-id>` lists the open waits and their request ids',
  WAIT_ALREADY_ANSWERED: 'the first answer stands; `waymark show <run-id>` shows it',
  ANSWER_INVALID: 'the answer must match the schema `waymark show <run-id>` prints for the wait',
  GRAPH_MISMATCH:
    'resume with the graph file the run started under (--graph), or `waymark rewind` it under the new one',
  STORE_CORRUPT: 'only this run is affected; every other run in the database still loads',
  STORE_VERSION_UNSUPPORTED: 'a newer waymark wrote this; upgrade waymark to read it',
  STORE_CONFLICT: 'another process moved this run at the same time; try again',
  STORE_UNAVAILABLE: 'nothing was written; if another process held the database, try again',
  OPTIONS_INVALID: 'see `waymark <command> --help`',
};

/**
 * Prints an error as one line with its code and a hint (a stack trace only with --verbose) and
 * returns the exit code: 2 for what the user can fix in the command or its input, 1 otherwise.
 */
export function reportError(io: Io, error: unknown): number {
  if (!isWaymarkError(error)) {
    const message = error instanceof Error ? error.message : String(error);
    if (io.flags.json) io.json({ type: 'error', code: 'INTERNAL', message });
    else {
      io.error(`${io.c.red('error')} ${message}`);
      if (io.flags.verbose && error instanceof Error && error.stack) io.error(error.stack);
      else io.error(`${io.c.dim('hint:')} run again with --verbose for the stack trace`);
    }
    return exitCode.failed;
  }
  const code = error.code;
  const hint = hints[code];
  // The message starts with its code (so a log line alone says it); the CLI prints it once.
  const message = error.message.startsWith(`${code}: `)
    ? error.message.slice(code.length + 2)
    : error.message;
  const storeFault = code.startsWith('STORE_');
  if (io.flags.json) {
    io.json({ type: 'error', code, message, hint, details: error.details });
  } else {
    const [first, ...rest] = message.split('\n');
    io.error(`${io.c.red('error')} ${io.c.bold(code)}: ${first}`);
    // GRAPH_INVALID's message lists every diagnostic, one per line: all of them are shown.
    if (code === 'GRAPH_INVALID' && Array.isArray(error.details)) {
      for (const d of error.details as Diagnostic[]) io.error(formatDiagnostic(io, d));
    } else if (rest.length > 0) {
      for (const line of rest) io.error(line);
    }
    if (hint !== undefined) io.error(`${io.c.dim('hint:')} ${hint}`);
    if (io.flags.verbose && error.stack) io.error(error.stack);
  }
  return storeFault ? exitCode.failed : exitCode.usage;
}

/** One diagnostic as the CLI prints it: code (a warning says so), where, what, and the fix. */
export function formatDiagnostic(io: Io, d: Diagnostic): string {
  const where = d.node ?? (d.edge ? `${d.edge.from} -> ${d.edge.to}` : '');
  const code = d.severity === 'warning' ? io.c.yellow(`warning ${d.code}`) : io.c.red(d.code);
  return `  ${code}${where ? ` ${io.c.bold(where)}` : ''}: ${d.message}\n    ${io.c.dim('fix:')} ${d.hint}`;
}
