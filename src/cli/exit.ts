import { isWaymarkError, type WaymarkError } from '../error/waymark-error.js';
import type { Diagnostic } from '../graph/diagnostic.js';
import { exitCode } from './exit-code.js';
import type { Io } from './io.js';
import { isPostgres } from './location.js';
import { commandLine, shellQuote } from './next.js';

/**
 * The code printed for an error that is not a WaymarkError: a bug in waymark, or a failure
 * nothing mapped to a code yet. docs/errors.md says what it means and how to report it.
 */
export const internalCode = 'INTERNAL';

/** What a hint can know: the error's details as data. */
type Details = Readonly<Record<string, unknown>>;

/**
 * What to do next, for an error: the one line under it (the message says what happened). A
 * command in a hint is written out in full, with the run id, the file and --db, so it can be
 * run as printed; test/cli/hints.test.ts runs each one.
 */
export function hintFor(io: Io, error: WaymarkError): string {
  const { about } = io;
  const details = (
    typeof error.details === 'object' && error.details !== null ? error.details : {}
  ) as Details;
  const reason = details.reason;
  const runId = about.runId;
  const show = runId === undefined ? undefined : `\`${commandLine(io, ['show', runId])}\``;
  const help = `\`waymark ${about.command === undefined ? '' : `${about.command} `}--help\``;
  switch (error.code) {
    case 'USAGE_INVALID':
      if (details.commander === 'commander.unknownCommand')
        return '`waymark --help` lists the commands';
      if (reason === 'no-database') {
        return isPostgres(io.flags.db)
          ? 'check the URL and its ?schema=; the first run started with this --store makes the schema'
          : 'check the path; the first run started with this --db makes the database';
      }
      if (reason === 'no-graph-file' && runId !== undefined) {
        return `name the graph file: \`${commandLine(io, [about.command ?? 'show', runId, '--graph', '<graph-file>'])}\``;
      }
      return `see ${help} for the arguments and an example`;
    case 'GRAPH_FILE_INVALID':
      if (reason === 'missing' && runId !== undefined && !about.graphGiven) {
        return `the run recorded this file when it started; if the file moved, name it: \`${commandLine(io, [about.command ?? 'show', runId, '--graph', '<graph-file>'])}\``;
      }
      if (reason === 'commonjs') {
        return typeof details.packageJson === 'string'
          ? `rename the file to .mjs, or add "type": "module" to ${details.packageJson}`
          : 'rename the file to .mjs, or put it in a package whose package.json has "type": "module"';
      }
      if (reason === 'missing') {
        if (typeof details.nearest === 'string') return `did you mean ${details.nearest}?`;
        return `check the path: nothing is at ${String(details.path)}`;
      }
      if (reason === 'syntax') {
        return `fix the line above; \`waymark validate ${shellQuote(String(details.path))}\` checks the file again`;
      }
      return 'the file must be a .ts or .js module whose default export is a graph: `export default graph(...)...compile()`';
    case 'GRAPH_INVALID':
      return `fix each problem listed above; \`waymark validate ${shellQuote(about.graphFile ?? '<graph-file>')}\` checks again`;
    case 'INPUT_INVALID':
      return "the input must match the graph's state schema; --json lists every issue in `details`";
    case 'LIMIT_KEY_INVALID':
      return "the graph's limits.key function makes each run's key from its input: give the input it reads, or fix the function";
    case 'INPUT_NOT_ALLOWED':
      return "the graph's input schema lists the fields a run may set; the others are private to it";
    case 'RUN_NOT_FOUND':
      if (reason === 'ambiguous') return 'name the run by more of its id, or all of it';
      if (reason === 'no-database') {
        return isPostgres(io.flags.db)
          ? 'a run lives in the database it was started with: check --store and its ?schema= (default waymark)'
          : 'a run lives in the database it was started with: check --db (default .waymark/waymark.db under the current directory)';
      }
      return `\`${commandLine(io, ['ls'])}\` lists the runs in this database (or name another with --db)`;
    case 'SCHEDULE_INVALID':
      return 'a cron expression has 5 fields (6 with seconds first), a time zone is an IANA name (Europe/Berlin), and the input must match the graph; --json has the cause in `details`';
    case 'SCHEDULE_NOT_FOUND':
      return `\`${commandLine(io, ['schedule', 'ls'])}\` lists the schedules in this database`;
    case 'RUN_EXISTS':
      return `${show ?? '`waymark show <run-id>`'} shows the run that has this id; choose another --run-id, or leave it out for a fresh one`;
    case 'RUN_NOT_RESUMABLE': {
      const next = about.next ?? [];
      if (next.length > 0) return next.map((n) => `\`${n}\``).join(', or ');
      return `${show ?? '`waymark show <run-id>`'} says how it stopped`;
    }
    case 'RUN_NOT_DUE':
      return `it wakes by itself: a worker (or waymark serve) on this database wakes it when it is due, as does a resume then; ${show ?? '`waymark show <run-id>`'} says when`;
    case 'RUN_QUEUED':
      return `it starts by itself once a run of its key stops running: the process that created it, or a worker, starts it; ${show ?? '`waymark show <run-id>`'} says what it waits for`;
    case 'RUN_OWNED': {
      // The run is live elsewhere: following it works; driving it a second time would not.
      const until =
        typeof details.expiresAt === 'number'
          ? ` (its lease expires at ${new Date(details.expiresAt).toISOString()} unless renewed)`
          : '';
      return `another process is driving this run now: ${show ?? '`waymark show <run-id>`'} says where it stands; resume it once that process has stopped${until}`;
    }
    case 'LEASE_LOST':
      return `this process stopped driving the run: another took it over, or its lease could not be renewed in time; ${show ?? '`waymark show <run-id>`'} says where it stands`;
    case 'WAIT_EXPIRED':
      return `its deadline passed, and the run routes on that instead; ${show ?? '`waymark show <run-id>`'} shows how it went on`;
    case 'WAIT_CLOSED':
      return `nothing will apply an answer to it now; ${show ?? '`waymark show <run-id>`'} shows how the run went on`;
    case 'RUN_NOT_CONTINUABLE':
      return `a thread continues from a run that succeeded; ${show ?? '`waymark show <run-id>`'} says where this one stands`;
    case 'RUN_NOT_PATCHABLE':
      return `${show ?? '`waymark show <run-id>`'} says where the run stands; a state is changed while the run waits or after it stopped`;
    case 'GOTO_INVALID':
      return `${show ?? '`waymark show <run-id>`'} says where the run stands; a run moves to a node outside fan-outs and joins (docs/semantics.md)`;
    case 'RUN_LIVE':
      return `a live run is never deleted: ${show ?? '`waymark show <run-id>`'} says who drives it; cancel it, or let it stop, then delete it`;
    case 'RUN_WAITING': {
      const waiting = typeof details.runId === 'string' ? details.runId : runId;
      if (waiting === undefined) break;
      return `answer or cancel it first, or delete it with what it waits for: \`${commandLine(io, ['rm', waiting, '--force'])}\``;
    }
    case 'RUN_REFERENCED':
      return `delete it once the runs started from it finish; ${show ?? '`waymark show <run-id>`'} says where it stands`;
    case 'RUN_NOT_CANCELLABLE':
      return `the run is over already; ${show ?? '`waymark show <run-id>`'} shows how it ended`;
    case 'WAIT_NOT_FOUND':
      return `${show ?? '`waymark show <run-id>`'} lists the open waits and their request ids`;
    case 'WAIT_ALREADY_ANSWERED':
      return `the first answer stands; ${show ?? '`waymark show <run-id>`'} shows it`;
    case 'SIGNAL_INVALID':
      return "the payload must match the schema of the graph file's event node of that name";
    case 'SIGNAL_UNKNOWN':
      return `\`${commandLine(io, ['ls'])}\` lists the runs; the graph file names its event nodes (event({ name }))`;
    case 'ANSWER_INVALID':
      return `the answer must match the schema ${show ?? '`waymark show <run-id>`'} prints for the wait`;
    case 'GRAPH_MISMATCH':
      if (runId === undefined) break;
      if (about.command === 'show' || about.command === 'graph') {
        return `\`${commandLine(io, ['trace', runId], { graph: false })}\` reads the run without its graph file`;
      }
      if (about.graphFile !== undefined) {
        return `a new run of this graph file reads back every step that did not change: \`${commandLine(io, ['run', about.graphFile, '--reuse', runId], { graph: false })}\` (or name the file the run started with: --graph <graph-file>)`;
      }
      break;
    case 'STATE_VERSION_UNKNOWN':
    case 'MIGRATION_FAILED':
      return "declare a migration from the run's state version in the graph (`migrations`, docs/durability.md)";
    case 'STORE_CORRUPT':
      if (typeof details.runId === 'string') {
        return `only run "${details.runId}" is affected: \`${commandLine(io, ['ls'])}\` lists every other run`;
      }
      return 'waymark keeps runs in a SQLite file it created: check --db';
    case 'STORE_VERSION_UNSUPPORTED':
      return 'a newer waymark wrote this; upgrade waymark to read it (`waymark --version` prints this one)';
    case 'STORE_CONFLICT':
      return `another process moved this run at the same time; ${show ?? '`waymark show <run-id>`'} says where it stands now`;
    case 'STORE_UNAVAILABLE':
      switch (reason) {
        case 'driver-missing':
          return 'add it to the project: npm install better-sqlite3@12';
        case 'driver-broken':
          return 'its native module is missing or was built for another Node.js: npm rebuild better-sqlite3';
        case 'directory':
          return '--db names a file, not a directory: e.g. --db <directory>/waymark.db';
        case 'missing':
          return 'check the path; the first run started with this --db makes the database';
        case 'no-directory':
          return 'check the --db path: one of its folders is a file, or may not be written';
        default:
          return error.retryable
            ? 'another process held the database; nothing was written: try again'
            : "nothing was written: check the file's permissions and the free disk space";
      }
    case 'STORE_LIMIT':
      return 'split the work into several runs';
    case 'OPTIONS_INVALID':
      if (about.command === 'rewind' && runId !== undefined) {
        return `\`${commandLine(io, ['trace', runId], { graph: false })}\` prints the path: rewind to one of its nodes`;
      }
      return `see ${help}`;
    default:
      break;
  }
  return `docs/errors.md explains ${error.code}`;
}

/**
 * Prints an error as one line with its code and a hint (a stack trace only with --verbose) and
 * returns the exit code: 2 for what the user can fix in the command or its input, 1 otherwise.
 * An error that is not a WaymarkError is printed as INTERNAL, never without a code.
 */
export function reportError(io: Io, error: unknown): number {
  if (!isWaymarkError(error)) {
    const message = error instanceof Error ? error.message : String(error);
    const hint = `this is a bug in waymark: run the command again with --verbose and report what it prints, with \`waymark --version\` (docs/errors.md, ${internalCode})`;
    if (io.flags.json) {
      io.json({ type: 'error', code: internalCode, message, hint, details: null });
    } else {
      io.error(`${io.c.red('error')} ${io.c.bold(internalCode)}: ${message.split('\n')[0]}`);
      if (io.flags.verbose && error instanceof Error && error.stack) io.error(error.stack);
      io.error(`${io.c.dim('hint:')} ${hint}`);
    }
    return exitCode.failed;
  }
  const code = error.code;
  const hint = hintFor(io, error);
  // The message starts with its code (so a log line alone says it); the CLI prints it once.
  const message = error.message.startsWith(`${code}: `)
    ? error.message.slice(code.length + 2)
    : error.message;
  const storeFault = code.startsWith('STORE_');
  if (io.flags.json) {
    io.json({ type: 'error', code, message, hint, details: error.details ?? null });
  } else {
    const [first, ...rest] = message.split('\n');
    io.error(`${io.c.red('error')} ${io.c.bold(code)}: ${first}`);
    // GRAPH_INVALID's message lists every diagnostic, one per line: all of them are shown.
    if (code === 'GRAPH_INVALID' && Array.isArray(error.details)) {
      for (const d of error.details as Diagnostic[]) io.error(formatDiagnostic(io, d));
    } else if (rest.length > 0) {
      for (const line of rest) io.error(line);
    }
    if (io.flags.verbose && error.stack) io.error(error.stack);
    io.error(`${io.c.dim('hint:')} ${hint}`);
  }
  return storeFault ? exitCode.failed : exitCode.usage;
}

/** One diagnostic as the CLI prints it: code (a warning says so), where, what, and the fix. */
export function formatDiagnostic(io: Io, d: Diagnostic): string {
  const where = d.node ?? (d.edge ? `${d.edge.from} -> ${d.edge.to}` : '');
  const code = d.severity === 'warning' ? io.c.yellow(`warning ${d.code}`) : io.c.red(d.code);
  return `  ${code}${where ? ` ${io.c.bold(where)}` : ''}: ${d.message}\n    ${io.c.dim('fix:')} ${d.hint}`;
}
