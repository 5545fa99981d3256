import type { Command } from 'commander';
import { storedStatuses } from '../store/store.js';
import type { Io } from './io.js';

// What each command accepts and its --help, in one place. What a command does lives in
// commands/<name>.ts and is imported only when that command runs: `waymark ls` loads neither
// tsx nor zod nor the runtime, and no other command's code.

/** Registers every command on `program`; `run(module, action, args)` runs an action. */
export type Runner = (load: () => Promise<Action>, args: unknown[]) => Promise<void>;

/** A command's action: its positional arguments and flags in, its exit code out. */
export type Action = (io: Io, ...args: never[]) => Promise<number>;

const graphFileArg = 'a .ts or .js module whose default export is a graph';
const graphOption = 'the graph file (default: the one the run was started with)';

/** Adds the commands, in the order --help lists them. */
export function defineCommands(program: Command, run: Runner): void {
  const action =
    (load: () => Promise<Action>) =>
    (...args: unknown[]) =>
      run(load, args.slice(0, -1));

  program
    .command('validate')
    .description(
      'compile a graph file and print every problem in it: exit 1 on an error, 0 with only warnings',
    )
    .argument('<graph-file>', graphFileArg)
    .addHelpText('after', '\nExample:\n  $ waymark validate examples/changelog-post/graph.ts')
    .action(action(async () => (await import('./commands/validate.js')).validate));

  program
    .command('graph')
    .description('render a graph file as Mermaid or DOT; with --run, mark the path a run took')
    .argument('<graph-file>', graphFileArg)
    .option('--format <format>', 'mermaid or dot', 'mermaid')
    .option('--run <run-id>', 'mark the path taken, the count per node and where the run stopped')
    .addHelpText(
      'after',
      `
Example:
  $ waymark graph examples/changelog-post/graph.ts --format dot | dot -Tsvg > graph.svg
  $ waymark graph examples/changelog-post/graph.ts --run 3f1c9a2e-...`,
    )
    .action(action(async () => (await import('./commands/graph.js')).render));

  program
    .command('run')
    .description('start a run of a graph file, checkpointing every step into the database')
    .argument('<graph-file>', graphFileArg)
    .option('--input <json>', 'the run input, as JSON (default {}, or the --reuse run input)')
    .option('--input-file <path>', 'read the run input from a JSON file (- reads standard input)')
    .option('--run-id <id>', 'the new run id (default: a fresh UUID)')
    .option(
      '--reuse <run-id>',
      'reuse the recorded output of every step whose inputs match this run',
    )
    .option(
      '--model <provider:model-id>',
      'the model every model node uses, e.g. openai:gpt-4o-mini',
    )
    .option('--max-tokens <n>', 'most model tokens the whole run may spend')
    .option('--max-cost <usd>', 'most model cost, in US dollars, the whole run may spend')
    .addHelpText(
      'after',
      `
The run id is printed as the run starts. Ctrl-C stops the process, not the run: every completed
step stays checkpointed, and \`waymark resume <run-id>\` continues it. With --reuse and no input,
the run starts from the input of the run it reuses (the same work under a fixed graph).

Example:
  $ waymark run examples/changelog-post/graph.ts --input '{"version":"2.4.0"}'
  $ waymark run examples/resilience-audit/graph.ts --model openai:gpt-4o-mini --max-cost 0.50
  $ echo '{"version":"2.4.0"}' | waymark run examples/changelog-post/graph.ts --input-file -

Exit code: 0 succeeded, 3 waiting for an answer, 1 failed, timed out or cancelled, 2 bad usage or input.`,
    )
    .action(action(async () => (await import('./commands/run.js')).run));

  program
    .command('resume')
    .description('continue a run that failed, waits for an answer, or was interrupted')
    .argument('<run-id>')
    .option('--graph <graph-file>', graphOption)
    .addHelpText(
      'after',
      `
Only the activations that did not complete run again; everything before is read back.

Example:
  $ waymark resume 3f1c9a2e-...`,
    )
    .action(action(async () => (await import('./commands/run.js')).resume));

  const answering = (command: Command) =>
    command
      .argument('<run-id>')
      .option('--request <id>', 'which wait to answer (default: the run has exactly one open)')
      .option('--by <who>', 'who answers: recorded with the answer', defaultAnswerer())
      .option('--no-resume', 'record the answer only; continue later with `waymark resume`')
      .option('--graph <graph-file>', graphOption);

  answering(
    program
      .command('answer')
      .description('answer a run that waits for a person, then continue it')
      .requiredOption('--value <json>', "the answer, as JSON matching the wait's schema"),
  )
    .addHelpText(
      'after',
      `
The answer is checked against the wait's schema and recorded once; a second answer is refused.

Example:
  $ waymark answer 3f1c9a2e-... --value '{"approved":false,"note":"the pricing line is wrong"}'`,
    )
    .action(action(async () => (await import('./commands/answer.js')).answer));

  for (const [name, approved] of [
    ['approve', true],
    ['reject', false],
  ] as const) {
    answering(
      program
        .command(name)
        .description(`${name} a yes-no question a run waits on, then continue it`)
        .option('--note <text>', 'a note for the answer (where the schema has a `note` field)'),
    )
      .addHelpText(
        'after',
        `
Works for a wait whose answer is a boolean, or an object with an \`approved\` boolean (and an
optional \`note\`).

Example:
  $ waymark ${name} 3f1c9a2e-...${approved ? '' : ' --note "the second section misstates the pricing change"'}`,
      )
      .action(
        action(async () => {
          const { approve, reject } = await import('./commands/answer.js');
          return approved ? approve : reject;
        }),
      );
  }

  program
    .command('cancel')
    .description('cancel a run for good: a cancelled run is never resumed')
    .argument('<run-id>')
    .option('--reason <text>', 'why: recorded with the run', 'cancelled with the waymark command')
    .option('--graph <graph-file>', graphOption)
    .addHelpText(
      'after',
      '\nExample:\n  $ waymark cancel 3f1c9a2e-... --reason "the release was pulled"',
    )
    .action(action(async () => (await import('./commands/cancel.js')).cancel));

  program
    .command('rewind')
    .description('start a new run from the checkpoint before a node, reusing unchanged steps')
    .argument('<run-id>', 'the run to rewind; it is left as it was')
    .requiredOption('--to <node>', 'the node to run again')
    .option('--note <text>', 'a note added to the state there (see --note-field)')
    .option('--note-field <field>', 'the state field the note goes into', 'notes')
    .option('--run-id <id>', 'the new run id (default: a fresh UUID)')
    .option('--graph <graph-file>', graphOption)
    .addHelpText(
      'after',
      `
The note goes into the state field --note-field (default "notes") through its reducer: a list
field gets the note appended, a text field is set to it. Every step after the rewind point whose
inputs did not change reads its recorded output back instead of running.

Example:
  $ waymark rewind 3f1c9a2e-... --to draft --note "the second section misstates the pricing change"`,
    )
    .action(action(async () => (await import('./commands/rewind.js')).rewind));

  program
    .command('ls')
    .description('list the runs in the database, newest first')
    .option('--status <status>', `only runs with this status (${storedStatuses.join(', ')})`)
    .option('--graph <name>', 'only runs of the graph with this name')
    .option('--limit <n>', 'at most this many runs', '50')
    .addHelpText('after', '\nExample:\n  $ waymark ls --status waiting')
    .action(action(async () => (await import('./commands/ls.js')).ls));

  program
    .command('show')
    .description('print a run: status, state, open waits, pending steps and errors')
    .argument('<run-id>')
    .option('--graph <graph-file>', graphOption)
    .addHelpText(
      'after',
      `
A run that stopped is read from its last checkpoint alone; only a run whose process died
mid-flight needs its graph file, to replay the steps after that checkpoint. --verbose adds the
stack trace of each error a node threw.

Example:
  $ waymark show 3f1c9a2e-...`,
    )
    .action(action(async () => (await import('./commands/show.js')).show));

  program
    .command('trace')
    .description('print the path a run took: every attempt with its duration and error')
    .argument('<run-id>')
    .addHelpText(
      'after',
      `
Reads the run's history alone: no graph file is loaded. A failed attempt shows what its error
was caused by; --verbose adds the stack trace of what the node threw.

Example:
  $ waymark trace 3f1c9a2e-... --json`,
    )
    .action(action(async () => (await import('./commands/trace.js')).trace));
}

function defaultAnswerer(): string {
  return process.env.USER ?? process.env.USERNAME ?? 'cli';
}
