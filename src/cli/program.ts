import { storedStatuses } from '../store/store.js';
import type { Io } from './io.js';
import { retentionCommands } from './retention-commands.js';
import { scheduleCommands } from './schedule-commands.js';
import { signalCommands } from './signal-commands.js';

// What each command accepts and its --help, as data, in one place. What a command does lives in
// commands/<name>.ts and is imported only when that command runs: `waymark ls` loads neither
// tsx nor zod nor the runtime, and no other command's code. A command line that is plainly
// right is read by `parseFast` (parse-command-line.ts) without loading commander (about a tenth of the start); help,
// and anything unusual or wrong, goes to commander, which prints the help and the errors.

/** A command's action: its positional arguments and flags in, its exit code out. */
export type Action = (io: Io, ...args: never[]) => Promise<number>;

/** An option as commander declares it: `--name <value>` or `--name` (or `--no-name`). */
export interface OptionSpec {
  readonly flags: string;
  readonly description: string;
  readonly default?: string | boolean;
  readonly required?: true;
}

/** A command: its name, positional arguments, options, help and action. */
export interface CommandSpec {
  readonly name: string;
  readonly description: string;
  readonly args: readonly {
    readonly name: string;
    readonly description?: string;
    /** May be left out (`[name]`): the action gets undefined. */
    readonly optional?: true;
  }[];
  readonly options: readonly OptionSpec[];
  /** Printed after the generated help: what to know, and an example. */
  readonly help: string;
  readonly load: () => Promise<Action>;
}

/** The options every command takes, before or after it. */
export const globalOptions: readonly OptionSpec[] = [
  { flags: '--db <path>', description: 'the database file', default: '.waymark/waymark.db' },
  {
    flags: '--store <location>',
    description:
      'where runs live: a SQLite file path, or postgres://... (also WAYMARK_STORE); default --db',
  },
  {
    flags: '--json',
    description: 'machine-readable output: one JSON value per line',
    default: false,
  },
  {
    flags: '--quiet',
    description: 'print only what a script needs (run id and status) and errors',
    default: false,
  },
  { flags: '--verbose', description: 'print stack traces with errors', default: false },
];

const graphFile = {
  name: 'graph-file',
  description: 'a .ts or .js module whose default export is a graph',
};
const runIdArg = { name: 'run-id' };
const graphOption: OptionSpec = {
  flags: '--graph <graph-file>',
  description: 'the graph file (default: the one the run was started with)',
};

const answering: readonly OptionSpec[] = [
  {
    flags: '--request <id>',
    description: 'which wait to answer (default: the run has exactly one open)',
  },
  {
    flags: '--by <who>',
    description: 'who answers: recorded with the answer',
    default: process.env.USER ?? process.env.USERNAME ?? 'cli',
  },
  {
    flags: '--no-resume',
    description: 'record the answer only; continue later with `waymark resume`',
  },
  graphOption,
];

const yesNoHelp = (name: string, example: string) => `
Works for a wait whose answer is a boolean, or an object with an \`approved\` boolean (and an
optional \`note\`).

Example:
  $ waymark ${name} 3f1c9a2e-...${example}`;

/** Every command, in the order --help lists them. */
export const commands: readonly CommandSpec[] = [
  {
    name: 'validate',
    description:
      'compile a graph file and print every problem in it: exit 1 on an error, 0 with only warnings',
    args: [graphFile],
    options: [
      {
        flags: '--budget <budget>',
        description:
          "also check the graph's worst case against a budget: 2usd, 40k tokens, or both",
      },
    ],
    help: '\nExample:\n  $ waymark validate examples/changelog-post/graph.ts\n  $ waymark validate examples/changelog-post/graph.ts --budget 0.50usd',
    load: async () => (await import('./commands/validate.js')).validate,
  },
  {
    name: 'graph',
    description:
      'render a graph file as Mermaid or DOT; with --run, mark the path a run took; with --cost, the bound per node',
    args: [graphFile],
    options: [
      { flags: '--format <format>', description: 'mermaid or dot', default: 'mermaid' },
      {
        flags: '--run <run-id>',
        description: 'mark the path taken, the count per node and where the run stopped',
      },
      {
        flags: '--cost',
        description:
          "note each node's worst case (and what earlier runs spent, from the database) and draw the worst path",
      },
    ],
    help: `
Example:
  $ waymark graph examples/changelog-post/graph.ts --format dot | dot -Tsvg > graph.svg
  $ waymark graph examples/changelog-post/graph.ts --cost
  $ waymark graph examples/changelog-post/graph.ts --run 3f1c9a2e-...`,
    load: async () => (await import('./commands/graph.js')).render,
  },
  {
    name: 'run',
    description: 'start a run of a graph file, checkpointing every step into the database',
    args: [graphFile],
    options: [
      {
        flags: '--input <json>',
        description: 'the run input, as JSON (default {}, or the --reuse run input)',
      },
      {
        flags: '--input-file <path>',
        description: 'read the run input from a JSON file (- reads standard input)',
      },
      { flags: '--run-id <id>', description: 'the new run id (default: a fresh UUID)' },
      {
        flags: '--reuse <run-id>',
        description: 'reuse the recorded output of every step whose inputs match this run',
      },
      {
        flags: '--model <provider:model-id>',
        description: 'the model every model node uses, e.g. openai:gpt-4o-mini',
      },
      {
        flags: '--context <json>',
        description:
          "the run's context (ctx.context), as JSON, checked by the graph's context schema",
      },
      { flags: '--max-tokens <n>', description: 'most model tokens the whole run may spend' },
      {
        flags: '--budget <budget>',
        description:
          "refuse to start unless the graph's worst case fits (2usd, 40k tokens); also the run's budget",
      },
      {
        flags: '--max-cost <usd>',
        description: 'most model cost, in US dollars, the whole run may spend',
      },
      {
        flags: '--pause-before <nodes>',
        description: 'breakpoints: the run waits before these nodes (comma-separated) run',
      },
      {
        flags: '--pause-after <nodes>',
        description: 'breakpoints: the run waits after these nodes (comma-separated) complete',
      },
      {
        flags: '--enqueue',
        description: 'record the run for `waymark worker` processes instead of running it here',
      },
      {
        flags: '--wait',
        description: 'with --enqueue: follow the run until it stops, and exit with its status',
      },
    ],
    help: `
The run id is printed as the run starts. Ctrl-C stops the process, not the run: every completed
step stays checkpointed, and \`waymark resume <run-id>\` continues it. With --reuse and no input,
the run starts from the input of the run it reuses (the same work under a fixed graph).

Example:
  $ waymark run examples/changelog-post/graph.ts --input '{"version":"2.4.0"}'
  $ waymark run examples/resilience-audit/graph.ts --model openai:gpt-4o-mini --max-cost 0.50
  $ echo '{"version":"2.4.0"}' | waymark run examples/changelog-post/graph.ts --input-file -
  $ waymark run graphs/triage.ts --store postgres://localhost/app --enqueue --wait

Exit code: 0 succeeded, 3 waiting for an answer, 1 failed, timed out or cancelled, 2 bad usage or input.`,
    load: async () => (await import('./commands/run.js')).run,
  },
  {
    name: 'resume',
    description: 'continue a run that failed, waits for an answer, or was interrupted',
    args: [runIdArg],
    options: [
      graphOption,
      {
        flags: '--plan',
        description: 'say what would be read back, run again and re-paid; run nothing',
      },
      {
        flags: '--goto <node>',
        description: 'move the run to this node first, dropping what was pending (LangGraph: goto)',
      },
    ],
    help: `
Only the activations that did not complete run again; everything before is read back. With
--plan nothing runs: the command prints what would, and the tokens and cost it would re-pay.

Example:
  $ waymark resume 3f1c9a2e-... --plan
  $ waymark resume 3f1c9a2e-...`,
    load: async () => (await import('./commands/run.js')).resume,
  },
  {
    name: 'continue',
    description: "start the next run of a finished run's thread (a conversation's next turn)",
    args: [runIdArg],
    options: [
      {
        flags: '--input <json>',
        description: 'the next turn: state fields, applied through their reducers',
      },
      {
        flags: '--input-file <path>',
        description: 'the same, from a file (- reads standard input)',
      },
      { flags: '--run-id <id>', description: "the new run's id (default: a fresh UUID)" },
      graphOption,
    ],
    help: `
The new run starts from the run's final state with the input applied through the reducers (a
field with \`append\` gets the new items added), and is labelled with its thread (the id of the
thread's first run) and the run it continues. \`waymark ls --thread <id>\` lists a thread's runs.

Example:
  $ waymark continue 3f1c9a2e-... --input '{"messages":[{"role":"user","text":"and in French?"}]}'`,
    load: async () => (await import('./commands/continue.js')).continueRun,
  },
  {
    name: 'patch',
    description: 'change the state of a run that waits or stopped, recording who and why',
    args: [runIdArg],
    options: [
      {
        flags: '--set <json>',
        description: 'the state fields to set, as JSON (through their reducers)',
        required: true,
      },
      { flags: '--reason <text>', description: 'why: recorded with the change', required: true },
      {
        flags: '--as-node <node>',
        description: "the change stands in for this node's completion; the run goes on after it",
      },
      {
        flags: '--by <who>',
        description: 'who changes it: recorded with the change',
        default: process.env.USER ?? process.env.USERNAME ?? 'cli',
      },
      graphOption,
    ],
    help: `
The change is the run's next step (never an edit of its history), checked by each field's
schema and merged through its reducer; the run stays where it was: answer or resume it to go
on. Only a run that waits for a person, failed or timed out, with no fan-out open.

Example:
  $ waymark patch 3f1c9a2e-... --set '{"severity":"high"}' --reason 'customer escalation'`,
    load: async () => (await import('./commands/patch.js')).patch,
  },
  {
    name: 'answer',
    description: 'answer a run that waits for a person, then continue it',
    args: [runIdArg],
    options: [
      {
        flags: '--value <json>',
        description: "the answer, as JSON matching the wait's schema",
        required: true,
      },
      ...answering,
    ],
    help: `
The answer is checked against the wait's schema and recorded once; a second answer is refused.

Example:
  $ waymark answer 3f1c9a2e-... --value '{"approved":false,"note":"the pricing line is wrong"}'`,
    load: async () => (await import('./commands/answer.js')).answer,
  },
  ...signalCommands,
  {
    name: 'approve',
    description: 'approve a yes-no question a run waits on, then continue it',
    args: [runIdArg],
    options: [
      {
        flags: '--note <text>',
        description: 'a note for the answer (where the schema has a `note` field)',
      },
      ...answering,
    ],
    help: yesNoHelp('approve', ''),
    load: async () => (await import('./commands/answer.js')).approve,
  },
  {
    name: 'reject',
    description: 'reject a yes-no question a run waits on, then continue it',
    args: [runIdArg],
    options: [
      {
        flags: '--note <text>',
        description: 'a note for the answer (where the schema has a `note` field)',
      },
      ...answering,
    ],
    help: yesNoHelp('reject', ' --note "the second section misstates the pricing change"'),
    load: async () => (await import('./commands/answer.js')).reject,
  },
  {
    name: 'cancel',
    description: 'cancel a run for good: a cancelled run is never resumed',
    args: [runIdArg],
    options: [
      {
        flags: '--reason <text>',
        description: 'why: recorded with the run',
        default: 'cancelled with the waymark command',
      },
      graphOption,
    ],
    help: '\nExample:\n  $ waymark cancel 3f1c9a2e-... --reason "the release was pulled"',
    load: async () => (await import('./commands/cancel.js')).cancel,
  },
  {
    name: 'clear-cache',
    description: "forget the cached outputs of a graph's cached nodes (or one node's)",
    args: [graphFile],
    options: [{ flags: '--node <name>', description: 'only this node' }],
    help: '\nExample:\n  $ waymark clear-cache graphs/weather.ts --node lookup',
    load: async () => (await import('./commands/clear-cache.js')).clearCache,
  },
  {
    name: 'rewind',
    description: 'start a new run from the checkpoint before a node, reusing unchanged steps',
    args: [{ name: 'run-id', description: 'the run to rewind; it is left as it was' }],
    options: [
      { flags: '--to <node>', description: 'the node to run again', required: true },
      { flags: '--note <text>', description: 'a note added to the state there (see --note-field)' },
      {
        flags: '--note-field <field>',
        description: 'the state field the note goes into',
        default: 'notes',
      },
      { flags: '--run-id <id>', description: 'the new run id (default: a fresh UUID)' },
      graphOption,
      {
        flags: '--plan',
        description: 'say what would be read back, run again and re-paid; run nothing',
      },
    ],
    help: `
The note goes into the state field --note-field (default "notes") through its reducer: a list
field gets the note appended, a text field is set to it. Every step after the rewind point whose
inputs did not change reads its recorded output back instead of running.

With --plan nothing runs: the command prints which steps would run again and what they re-pay.

Example:
  $ waymark rewind 3f1c9a2e-... --to draft --plan
  $ waymark rewind 3f1c9a2e-... --to draft --note "the second section misstates the pricing change"`,
    load: async () => (await import('./commands/rewind.js')).rewind,
  },
  {
    name: 'serve',
    description: 'serve the HTTP API over the database: runs, their events (SSE), waits',
    args: [],
    options: [
      {
        flags: '--graphs <module or folder>',
        description: 'the graph module, or a folder of them, whose runs the API reads and drives',
        required: true,
      },
      { flags: '--port <n>', description: 'the port (0: any free one, printed)', default: '0' },
      { flags: '--host <address>', description: 'the address to listen on', default: '127.0.0.1' },
      {
        flags: '--cors <origins>',
        description: 'origins (comma-separated) whose pages may call the API; default none',
      },
      {
        flags: '--grace-ms <ms>',
        description:
          'on SIGTERM, how long running nodes may take to finish before their runs are given back',
        default: '5000',
      },
    ],
    help: `
Every request carries the bearer token printed at start (or the one in WAYMARK_TOKEN). The API
is in docs/server.md: graphs, runs (start, list, get, trace, history, the state at a step), a
run's events as Server-Sent Events (resumable with Last-Event-ID), waits (list, answer), and
cancel, resume, continue and patch; its OpenAPI document at /openapi.json. Runs it starts or
moves on run in this process; SIGTERM or Ctrl-C gives them back resumable, never cancelled.

Example:
  $ waymark serve --graphs ./graphs --port 8787`,
    load: async () => (await import('./commands/serve.js')).serveApi,
  },
  {
    name: 'ui',
    description: 'serve the web page (runs, their paths, waits) and the HTTP API on 127.0.0.1',
    args: [],
    options: [
      {
        flags: '--graphs <module or folder>',
        description: 'the graphs to draw and drive (default: the graph files the runs recorded)',
      },
      { flags: '--port <n>', description: 'the port (0: any free one, printed)', default: '0' },
      { flags: '--no-open', description: 'print the URL without opening a browser' },
    ],
    help: `
The URL carries the token in its fragment (#token=...): a browser never sends a fragment, so the
token stays out of logs; keep the URL to yourself. A browser opens only on a terminal outside CI.
The page is in docs/ui.md: runs (live), a run's graph with its path and timeline, waits to answer.

Example:
  $ waymark ui --graphs ./graphs --port 8788`,
    load: async () => (await import('./commands/ui.js')).ui,
  },
  {
    name: 'worker',
    description:
      'claim and do the work of some graphs from the store (PostgreSQL, or a SQLite file shared on this machine), until SIGTERM (then drain)',
    args: [],
    options: [
      {
        flags: '--graphs <module or folder>',
        description: 'the graph module, or a folder of them, this worker runs',
        required: true,
      },
      { flags: '--concurrency <n>', description: 'node bodies at once', default: '8' },
      {
        flags: '--lease-ms <ms>',
        description:
          "how long a claim lasts unless renewed: a dead worker's work waits about this long",
        default: '10000',
      },
      {
        flags: '--poll-ms <ms>',
        description: 'the longest an idle worker waits without a notification',
        default: '1000',
      },
      {
        flags: '--retention-sweep-ms <ms>',
        description: "how often it deletes finished runs past their graph's retention (0: never)",
        default: '60000',
      },
      {
        flags: '--no-inline',
        description:
          "queue every node as a task, never running a run's sole next node where it was folded",
      },
    ],
    help: `
Registers the graphs it runs (name and structural hash) and claims only their work: runs
enqueued with \`waymark run --enqueue\`, the nodes their steps schedule, answers, timers. Any
number of workers on any number of machines may share one PostgreSQL database, or any number of
processes on one machine one SQLite file (--db; they poll it). SIGTERM (or Ctrl-C) stops
it claiming, lets its nodes finish within a lease, gives back what is left, and exits 0.

Example:
  $ waymark worker --store postgres://localhost/app --graphs ./graphs --concurrency 16
  $ waymark worker --db runs.db --graphs ./graphs`,
    load: async () => (await import('./commands/worker.js')).worker,
  },
  {
    name: 'ls',
    description: 'list the runs in the database, newest first',
    args: [],
    options: [
      {
        flags: '--status <status>',
        description: `only runs with this status (${storedStatuses.join(', ')})`,
      },
      { flags: '--graph <name>', description: 'only runs of the graph with this name' },
      { flags: '--thread <id>', description: "only the runs of this thread (its first run's id)" },
      { flags: '--limit <n>', description: 'at most this many runs', default: '50' },
    ],
    help: '\nExample:\n  $ waymark ls --status waiting',
    load: async () => (await import('./commands/ls.js')).ls,
  },
  {
    name: 'show',
    description: 'print a run: status, state, open waits, pending steps and errors',
    args: [runIdArg],
    options: [
      graphOption,
      { flags: '--at <seq>', description: 'the state after this step instead (0: the input)' },
      { flags: '--diff', description: 'with --at: the fields that step changed, before and after' },
    ],
    help: `
A run that stopped is read from its last checkpoint alone; only a run whose process died
mid-flight needs its graph file, to replay the steps after that checkpoint. --verbose adds the
stack trace of each error a node threw. --at replays the history through the graph file up to
that step (nothing per step is stored); \`waymark watch\` numbers the steps (an event's offset
is seq.i).

Example:
  $ waymark show 3f1c9a2e-...
  $ waymark show 3f1c9a2e-... --at 4 --diff`,
    load: async () => (await import('./commands/show.js')).show,
  },
  {
    name: 'watch',
    description: "follow a run's events live, from another terminal, to its end",
    args: [runIdArg],
    options: [
      graphOption,
      {
        flags: '--after <offset>',
        description: 'start after this event (its offset, as printed): resume a watch',
      },
      { flags: '--states', description: 'completions carry the state after them (--json)' },
      { flags: '--no-follow', description: 'print what is recorded now, then exit' },
    ],
    help: `
Reads the run's history and follows it as it grows, whoever drives the run (this machine's
process or any worker); each line starts with the event's offset. Ctrl-C stops watching, never
the run. Exits with the run's exit code once it ends: 0 succeeded, 3 waiting (--no-follow),
1 failed, timed out or cancelled.

Example:
  $ waymark watch 3f1c9a2e-... --json`,
    load: async () => (await import('./commands/watch.js')).watchRun,
  },
  {
    name: 'trace',
    description: 'print the path a run took: every attempt with its duration and error',
    args: [runIdArg],
    options: [],
    help: `
Reads the run's history alone: no graph file is loaded. A failed attempt shows what its error
was caused by; --verbose adds the stack trace of what the node threw.

Example:
  $ waymark trace 3f1c9a2e-... --json`,
    load: async () => (await import('./commands/trace.js')).trace,
  },
  {
    name: 'coverage',
    description:
      "report which of a graph's routes, error edges, join outcomes, waits and caps the database's runs took",
    args: [graphFile],
    options: [
      {
        flags: '--min <percent>',
        description: 'exit 1 when a kind in --kinds is covered less than this (0-100)',
      },
      {
        flags: '--kinds <kinds>',
        description: 'the kinds --min checks, comma-separated',
        default: 'route,error',
      },
    ],
    help: `
Reads every run of the graph in the database (runs of another version of it are skipped, and
listed). To measure a test suite, let its tests run the graph on one SQLite file (a SqliteStore
at that path), then report on that file:

Example:
  $ waymark coverage examples/bug-triage/graph.ts --store .waymark/coverage.db --min 100`,
    load: async () => (await import('./commands/coverage.js')).coverage,
  },
  ...scheduleCommands,
  ...retentionCommands,
];
