import { describe, expect, it } from 'vitest';
import { commanderProgram } from './main.js';
import { parseFast } from './parse-command-line.js';

/** What commander makes of a command line: the command, its arguments and the global flags. */
async function throughCommander(argv: readonly string[]) {
  let seen: { command: string; args: readonly unknown[] } | undefined;
  const program = commanderProgram('0.0.0', async (command, args) => {
    seen = { command: command.name, args };
  });
  await program.parseAsync([...argv], { from: 'user' });
  const globals = program.opts();
  const given = ['db', 'json', 'quiet', 'verbose']
    .sort()
    .filter((name) => program.getOptionValueSource(name) !== 'default');
  return { ...seen, globals, given };
}

function fast(argv: readonly string[]) {
  const parsed = parseFast(argv);
  if (parsed === undefined) return undefined;
  return {
    command: parsed.command.name,
    args: parsed.args,
    globals: parsed.globals,
    given: [...parsed.given].sort(),
  };
}

// Command lines a user or a script types: each must read the same without commander.
const accepted: readonly (readonly string[])[] = [
  ['ls'],
  ['--db', 'w.db', 'ls'],
  ['ls', '--db', 'w.db', '--json'],
  ['--json', '--db=w.db', 'ls', '--status', 'waiting', '--limit', '5'],
  ['show', 'r-1', '--verbose'],
  ['trace', 'r-1', '--quiet'],
  ['run', 'g.ts', '--input', '{"a":1}', '--run-id', 'x', '--max-tokens', '100'],
  ['run', 'g.ts', '--input-file', '-'],
  ['run', 'g.ts', '--input=--weird'],
  ['answer', 'r', '--value', '{"stars":4}', '--no-resume', '--by', 'ed'],
  ['approve', 'r', '--request', 'r/review:1'],
  ['reject', 'r', '--note', 'the title is wrong', '--graph', 'g.ts'],
  ['rewind', 'r', '--to', 'draft', '--note', 'n', '--note-field', 'log'],
  ['cancel', 'r'],
  ['graph', 'g.ts', '--format', 'dot', '--run', 'r'],
  ['validate', 'g.ts', '--db', 'ls'],
  ['worker', '--graphs', './graphs', '--concurrency', '16'],
  ['worker', '--graphs', './graphs', '--no-inline'],
];

// Command lines commander must read: help, errors, and what the fast reader does not know.
const leftToCommander: readonly (readonly string[])[] = [
  [],
  ['--help'],
  ['ls', '--help'],
  ['frobnicate'],
  ['run'],
  ['run', 'a.ts', 'b.ts'],
  ['run', 'g.ts', '--inptu', '{}'],
  ['answer', 'r'],
  ['rewind', 'r'],
  ['ls', '-h'],
  ['ls', '--json=yes'],
  ['show', '--', 'r'],
  ['--graph', 'g.ts', 'show', 'r'],
  ['run', 'g.ts', '--input'],
];

describe('parseFast', () => {
  for (const argv of accepted) {
    it(`reads \`waymark ${argv.join(' ')}\` as commander does`, async () => {
      expect(fast(argv)).toEqual(await throughCommander(argv));
    });
  }

  it('leaves help, errors and anything unusual to commander', () => {
    for (const argv of leftToCommander) expect(fast(argv), argv.join(' ')).toBeUndefined();
  });
});
