import type { CommandSpec } from './program.js';

// The commands that delete runs (docs/time.md, "Retention"), as data, beside program.ts's.

/** `waymark rm` and `waymark prune`. */
export const retentionCommands: readonly CommandSpec[] = [
  {
    name: 'rm',
    description: 'delete a run (or a thread) and everything it owns, in one transaction',
    args: [{ name: 'run-id' }],
    options: [
      {
        flags: '--thread',
        description: "the id is a thread's (its first run's): delete every run of it",
      },
      { flags: '--force', description: 'delete a waiting run too: what it waits for is dropped' },
    ],
    help: `
A live run (running, or driven now) is never deleted: cancel it first. A run an unfinished run
reuses or was rewound from is kept until that run finishes.

Example:
  $ waymark rm 3f1c9a2e-...
  $ waymark rm c1 --thread`,
    load: async () => (await import('./commands/retention.js')).rm,
  },
  {
    name: 'prune',
    description: 'delete the finished runs of a status that finished longer ago than a duration',
    args: [],
    options: [
      {
        flags: '--status <status>',
        description: 'succeeded, failed, cancelled or timed_out (comma-separated for several)',
        required: true,
      },
      {
        flags: '--older-than <duration>',
        description: 'finished longer ago than this: 30d, 12h, 90m',
        required: true,
      },
      { flags: '--graph <name>', description: 'only runs of the graph with this name' },
      { flags: '--limit <n>', description: 'delete at most this many', default: '1000' },
      { flags: '--dry-run', description: 'list what would be deleted, and delete nothing' },
    ],
    help: '\nExample:\n  $ waymark prune --status succeeded --older-than 30d --dry-run',
    load: async () => (await import('./commands/retention.js')).prune,
  },
];
