import type { Command } from 'commander';
import { type CommandSpec, commands, globalOptions, type OptionSpec } from './program.js';

// Reading a command line against the commands' table (program.ts): onto commander, for help and
// for anything unusual, or by `parseFast`, for the plainly right one, without loading commander.

/** How a command line was read: the command, its arguments and flags, and the global flags. */
export interface Parsed {
  readonly command: CommandSpec;
  /** The positional arguments, then the command's flags: what its action takes after `io`. */
  readonly args: readonly unknown[];
  readonly globals: Readonly<Record<string, string | boolean>>;
  /** The global options given on the command line (not left at their default). */
  readonly given: ReadonlySet<string>;
}

/** Registers every command on a commander program; `run` gets each invoked action. */
export function defineCommands(
  program: Command,
  run: (command: CommandSpec, args: readonly unknown[], sub: Command) => Promise<void>,
): void {
  // A command named by two words (`schedule add`) is a sub-command of a group named by the first.
  const groups = new Map<string, Command>();
  for (const spec of commands) {
    const [first = '', sub] = spec.name.split(' ');
    let parent = program;
    if (sub !== undefined) {
      parent = groups.get(first) ?? program.command(first).description(`${first} commands`);
      groups.set(first, parent);
    }
    const command = parent.command(sub ?? first).description(spec.description);
    for (const arg of spec.args)
      command.argument(arg.optional ? `[${arg.name}]` : `<${arg.name}>`, arg.description);
    for (const option of spec.options) {
      if (option.required) command.requiredOption(option.flags, option.description);
      else if (option.default !== undefined)
        command.option(option.flags, option.description, option.default);
      else command.option(option.flags, option.description);
    }
    command.addHelpText('after', spec.help);
    command.action((...args: unknown[]) => run(spec, args.slice(0, -1), command));
  }
}

/** An option's parts: its attribute (camelCase), whether it takes a value, and if it negates. */
function shape(option: OptionSpec) {
  const [flag = '', value] = option.flags.split(' ');
  const negated = flag.startsWith('--no-');
  const name = (negated ? flag.slice(5) : flag.slice(2)).replace(/-(\w)/g, (_, c: string) =>
    c.toUpperCase(),
  );
  return { flag, name, takesValue: value !== undefined, negated };
}

/**
 * Reads a command line that is plainly right (a known command, known options, every argument
 * and required option there) without commander; undefined for anything else (--help, an
 * unknown or misspelt option, a missing argument, `--`, a short flag), which commander then
 * reads, so its help and its errors are printed exactly as they always were. Same result as
 * commander's for what it accepts (src/cli/program.test.ts checks).
 *
 * @example
 * parseFast(['--db', 'w.db', 'ls', '--limit', '5']); // { command: ls, args: [{ limit: '5' }], ... }
 */
export function parseFast(argv: readonly string[]): Parsed | undefined {
  const globals: Record<string, string | boolean> = {};
  const given = new Set<string>();
  for (const option of globalOptions) {
    const { name } = shape(option);
    if (option.default !== undefined) globals[name] = option.default;
  }
  const flags: Record<string, string | boolean> = {};
  const positional: string[] = [];
  let command: CommandSpec | undefined;
  for (let i = 0; i < argv.length; i++) {
    const token = argv[i]!;
    if (!token.startsWith('-') || token === '-') {
      if (command === undefined) {
        // A group's sub-command is named by the word after the group's.
        const grouped = commands.some((c) => c.name.startsWith(`${token} `));
        const name = grouped ? `${token} ${argv[++i] ?? ''}` : token;
        command = commands.find((c) => c.name === name);
        if (command === undefined) return undefined;
      } else positional.push(token);
      continue;
    }
    if (!token.startsWith('--') || token === '--' || token === '--help') return undefined;
    const eq = token.indexOf('=');
    const flag = eq === -1 ? token : token.slice(0, eq);
    const own = command?.options.find((o) => shape(o).flag === flag);
    const global = own ? undefined : globalOptions.find((o) => shape(o).flag === flag);
    const option = own ?? global;
    if (option === undefined) return undefined;
    const { name, takesValue, negated } = shape(option);
    let value: string | boolean;
    if (takesValue) {
      if (eq !== -1) value = token.slice(eq + 1);
      else {
        const next = argv[++i];
        if (next === undefined) return undefined;
        value = next;
      }
    } else {
      if (eq !== -1) return undefined;
      value = !negated;
    }
    if (global) {
      globals[name] = value;
      given.add(name);
    } else flags[name] = value;
  }
  if (command === undefined) return undefined;
  const required = command.args.filter((a) => !a.optional).length;
  if (positional.length < required || positional.length > command.args.length) return undefined;
  while (positional.length < command.args.length) positional.push(undefined as never);
  for (const option of command.options) {
    const { name, negated } = shape(option);
    if (flags[name] !== undefined) continue;
    if (option.required) return undefined;
    if (option.default !== undefined) flags[name] = option.default;
    else if (negated) flags[name] = true;
  }
  return { command, args: [...positional, flags], globals, given };
}
