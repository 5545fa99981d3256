import { Command, CommanderError } from 'commander';
import { WaymarkError } from '../error/waymark-error.js';
import { answerCommands } from './commands/answer.js';
import { cancelCommand } from './commands/cancel.js';
import { graphCommand } from './commands/graph.js';
import { lsCommand } from './commands/ls.js';
import { rewindCommand } from './commands/rewind.js';
import { runCommands } from './commands/run.js';
import { showCommand } from './commands/show.js';
import { traceCommand } from './commands/trace.js';
import { validateCommand } from './commands/validate.js';
import { exitCode, reportError } from './exit.js';
import { type GlobalFlags, Io } from './io.js';

/** The database the command uses unless --db names another. */
export const defaultDb = '.waymark/waymark.db';

/**
 * The `waymark` command: parses `argv` (without node and the script), runs one command and
 * returns its exit code. Never exits the process and never throws: bin/waymark.js does the exit.
 *
 * @example
 * process.exitCode = await main(['validate', 'graph.ts']);
 */
export async function main(argv: readonly string[]): Promise<number> {
  let code: number = exitCode.succeeded;
  const done = (c: number) => {
    code = c;
  };
  const program = new Command('waymark');
  let io: Io | undefined;
  const currentIo = () => {
    io ??= new Io(program.opts<GlobalFlags>());
    return io;
  };
  program
    .description('validate, run, resume and inspect waymark graphs; runs live in one SQLite file')
    .option('--db <path>', 'the database file', defaultDb)
    .option('--json', 'machine-readable output: one JSON value per line', false)
    .option('--quiet', 'print only what a script needs (run id and status) and errors', false)
    .option('--verbose', 'print stack traces with errors', false)
    .showHelpAfterError(false)
    .exitOverride()
    .configureOutput({ outputError: () => {} })
    .enablePositionalOptions(false)
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
  for (const register of [
    validateCommand,
    graphCommand,
    runCommands,
    answerCommands,
    cancelCommand,
    rewindCommand,
    lsCommand,
    showCommand,
    traceCommand,
  ]) {
    register(program, currentIo, done);
  }
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
        new WaymarkError('USAGE_INVALID', message, { retryable: false }),
      );
    }
    return reportError(currentIo(), error);
  }
}
