import { createRequire } from 'node:module';
import type * as commander from 'commander';
import { WaymarkError } from '../error/waymark-error.js';
import { exitCode } from './exit-code.js';
import { type About, type GlobalFlags, Io } from './io.js';
import { storeLocation } from './location.js';
import { defineCommands, parseFast } from './parse-command-line.js';
import { type CommandSpec, globalOptions } from './program.js';

/** The database the command uses unless --db names another. */
export const defaultDb = '.waymark/waymark.db';

/** Options of {@link main}. */
export interface MainOptions {
  /** What `--version` prints: the package's version (bin/waymark.js reads it). */
  readonly version?: string;
}

/**
 * The `waymark` command: parses `argv` (without node and the script), runs one command and
 * returns its exit code. Never exits the process and never throws: bin/waymark.js does the exit.
 * Each command's action loads the modules it needs when it runs, so `ls` never loads tsx, zod
 * or the runtime; a plainly right command line does not even load commander.
 *
 * @example
 * process.exitCode = await main(['validate', 'graph.ts']);
 */
export async function main(argv: readonly string[], options: MainOptions = {}): Promise<number> {
  const fast = parseFast(argv);
  if (fast !== undefined) {
    const where = storeLocation(fast.globals as unknown as GlobalFlags, fast.given, process.env);
    const io = new Io(
      { ...(fast.globals as unknown as GlobalFlags), db: where.location },
      {
        about: { command: fast.command.name },
        dbGiven: () => where.given,
      },
    );
    try {
      return await act(io, fast.command, fast.args);
    } catch (error) {
      // Loaded only when there is an error to print: hints know every command.
      return (await import('./exit.js')).reportError(io, error);
    }
  }
  return withCommander(argv, options);
}

async function act(io: Io, command: CommandSpec, args: readonly unknown[]): Promise<number> {
  const action = await command.load();
  try {
    return await action(io, ...(args as never[]));
  } catch (error) {
    // A run named by the start of its id: a command that found no run changed nothing, so it
    // is run again with the whole id (loaded only then, like the hints).
    const { withFullRunId } = await import('./run-id-prefix.js');
    const again = await withFullRunId(io, command, args, error);
    if (again === undefined) throw error;
    return action(io, ...(again as never[]));
  }
}

/**
 * The commander program of the command: every command and global option, --help and
 * --version. `onAction` gets the command to run and its arguments (flags last); the global
 * flags are `program.opts()`.
 */
export function commanderProgram(
  version: string,
  onAction: (
    command: CommandSpec,
    args: readonly unknown[],
    sub: commander.Command,
  ) => Promise<void>,
): commander.Command {
  // commander is CommonJS: required directly, it skips the ES module loader's translation.
  const { Command } = requireCommander();
  const program = new Command('waymark');
  program.description(
    'validate, run, resume and inspect waymark graphs; runs live in one SQLite file',
  );
  for (const option of globalOptions) {
    program.option(option.flags, option.description, option.default);
  }
  program
    .version(version, '-V, --version', 'print the version of waymark')
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
  defineCommands(program, onAction);
  for (const command of program.commands.flatMap((c) => [c, ...c.commands])) {
    command.exitOverride().configureOutput({ outputError: () => {} });
  }
  return program;
}

function requireCommander(): typeof commander {
  return createRequire(import.meta.url)('commander') as typeof commander;
}

/** The whole command line through commander: --help, and every usage error it words. */
async function withCommander(argv: readonly string[], options: MainOptions): Promise<number> {
  const { CommanderError } = requireCommander();
  const { reportError } = await import('./exit.js');
  let code: number = exitCode.succeeded;
  const about: About = {};
  let io: Io | undefined;
  const program = commanderProgram(options.version ?? 'unknown', async (command, args) => {
    code = await act(currentIo(), command, args);
  });
  // Made when first needed: by then commander has parsed the global options, wherever they were.
  const currentIo = () => {
    const flags = program.opts<GlobalFlags>();
    const given = (name: string) =>
      program.getOptionValueSource(name) !== 'default' &&
      program.getOptionValueSource(name) !== undefined;
    const where = storeLocation(flags, given, process.env);
    io ??= new Io({ ...flags, db: where.location }, { about, dbGiven: () => where.given });
    return io;
  };
  program.hook('preSubcommand', (_program, subcommand) => {
    about.command = subcommand.name();
  });

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
