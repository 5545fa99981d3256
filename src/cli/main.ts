import { createRequire } from 'node:module';
import type * as commander from 'commander';
import { WaymarkError } from '../error/waymark-error.js';
import { exitCode, reportError } from './exit.js';
import { type About, type GlobalFlags, Io } from './io.js';
import { defineCommands } from './program.js';

/** The database the command uses unless --db names another. */
export const defaultDb = '.waymark/waymark.db';

// commander is CommonJS: required directly, it skips the ES module loader's translation (about
// half its load time, on every start).
const { Command, CommanderError } = createRequire(import.meta.url)('commander') as typeof commander;

/** Options of {@link main}. */
export interface MainOptions {
  /** What `--version` prints: the package's version (bin/waymark.js reads it). */
  readonly version?: string;
}

/**
 * The `waymark` command: parses `argv` (without node and the script), runs one command and
 * returns its exit code. Never exits the process and never throws: bin/waymark.js does the exit.
 * Each command's action loads the modules it needs when it runs, so `ls` never loads tsx, zod
 * or the runtime.
 *
 * @example
 * process.exitCode = await main(['validate', 'graph.ts']);
 */
export async function main(argv: readonly string[], options: MainOptions = {}): Promise<number> {
  let code: number = exitCode.succeeded;
  const program = new Command('waymark');
  const about: About = {};
  let io: Io | undefined;
  // Made when first needed: by then commander has parsed the global options, wherever they were.
  const currentIo = () => {
    io ??= new Io(program.opts<GlobalFlags>(), {
      about,
      dbGiven: () => program.getOptionValueSource('db') !== 'default',
    });
    return io;
  };
  program
    .description('validate, run, resume and inspect waymark graphs; runs live in one SQLite file')
    .option('--db <path>', 'the database file', defaultDb)
    .option('--json', 'machine-readable output: one JSON value per line', false)
    .option('--quiet', 'print only what a script needs (run id and status) and errors', false)
    .option('--verbose', 'print stack traces with errors', false)
    .version(options.version ?? 'unknown', '-V, --version', 'print the version of waymark')
    .showHelpAfterError(false)
    .exitOverride()
    .configureOutput({ outputError: () => {} })
    .enablePositionalOptions(false)
    .hook('preSubcommand', (_program, subcommand) => {
      about.command = subcommand.name();
    })
    .addHelpText(
      'after',
      `
Exit codes: 0 succeeded, 3 waiting for an answer, 1 failed, timed out or cancelled,
2 bad usage or input (nothing was run or recorded).

Example:
  $ waymark validate examples/changelog-post/graph.ts
  $ waymark run examples/changelog-post/graph.ts --input '{"version":"2.4.0"}'
  $ waymark approve <run-id>`,
    );
  defineCommands(program, async (load, args) => {
    const action = await load();
    code = await action(currentIo(), ...(args as never[]));
  });
  for (const command of program.commands) {
    command.exitOverride().configureOutput({ outputError: () => {} });
  }

  try {
    await program.parseAsync([...argv], { from: 'user' });
    return code;
  } catch (error) {
    if (error instanceof CommanderError) {
      // --help and --version end here too, having printed what was asked.
      if (error.exitCode === 0) return exitCode.succeeded;
      // No command at all: commander printed the help to stderr; there is no error to add.
      if (error.code === 'commander.help') return exitCode.usage;
      // One line: commander puts its "(Did you mean --input?)" on a line of its own.
      const message = error.message.replace(/^error: /, '').replace(/\s*\n\s*/g, ' ');
      return reportError(
        currentIo(),
        new WaymarkError('USAGE_INVALID', message, {
          retryable: false,
          details: { commander: error.code },
        }),
      );
    }
    return reportError(currentIo(), error);
  }
}
