import type { CommandSpec } from './program.js';

// The `waymark schedule` group: sub-commands named by two words (parse-command-line.ts reads
// them), in a file of their own so that program.ts keeps its size.

const idArg = { name: 'id', description: 'the schedule id (`waymark schedule ls` lists them)' };
const load = (name: 'add' | 'ls' | 'pause' | 'resume' | 'rm') => async () =>
  (await import('./commands/schedule.js'))[name];

/** The schedule commands, in the order --help lists them. */
export const scheduleCommands: readonly CommandSpec[] = [
  {
    name: 'schedule add',
    description: 'store a schedule: each tick of a cron expression starts one run of a graph',
    args: [
      { name: 'graph-file', description: 'a .ts or .js module whose default export is a graph' },
    ],
    options: [
      {
        flags: '--cron <expr>',
        description: 'a cron expression (5 fields, or 6 with seconds first)',
        required: true,
      },
      {
        flags: '--timezone <zone>',
        description: 'the IANA time zone it is read in',
        default: 'UTC',
      },
      { flags: '--input <json>', description: "each run's input, checked by the graph's schema" },
      {
        flags: '--id <id>',
        description: 'the schedule id (default: from the graph, cron and input)',
      },
      {
        flags: '--overlap <policy>',
        description: 'while the previous run is live: skip, buffer-one or allow',
        default: 'skip',
      },
      {
        flags: '--catch-up <policy>',
        description: 'ticks missed while no host ran: latest, all or none',
        default: 'latest',
      },
    ],
    help: `
Whoever hosts the graph ticks the schedule: \`waymark worker\` processes (any number: each tick
starts one run) or \`waymark serve\`. Adding the same schedule again changes nothing.

Example:
  $ waymark schedule add graphs/report.ts --cron '0 9 * * 1-5' --timezone Europe/Berlin --input '{"team":"sales"}'`,
    load: load('add'),
  },
  {
    name: 'schedule ls',
    description: 'list the schedules, with their next tick and last run',
    args: [],
    options: [{ flags: '--graph <name>', description: 'only the schedules of this graph' }],
    help: '\nExample:\n  $ waymark schedule ls --json',
    load: load('ls'),
  },
  {
    name: 'schedule pause',
    description: 'pause a schedule: no tick starts a run until it is resumed',
    args: [idArg],
    options: [],
    help: '\nExample:\n  $ waymark schedule pause report:1f2e3d4c',
    load: load('pause'),
  },
  {
    name: 'schedule resume',
    description:
      'resume a paused schedule from now (the ticks it was paused for are not caught up)',
    args: [idArg],
    options: [],
    help: '\nExample:\n  $ waymark schedule resume report:1f2e3d4c',
    load: load('resume'),
  },
  {
    name: 'schedule rm',
    description: 'remove a schedule; the runs it started stay',
    args: [idArg],
    options: [],
    help: '\nExample:\n  $ waymark schedule rm report:1f2e3d4c',
    load: load('rm'),
  },
];
