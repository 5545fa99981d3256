import type { CommandSpec } from './program.js';

// The commands of signals for event nodes (docs/time.md#external-events), as program.ts lists them.

export const signalCommands: readonly CommandSpec[] = [
  {
    name: 'signal',
    description: 'send a signal to a run that waits (or will wait) for an external event',
    args: [
      { name: 'run-id', description: 'the run (with --key: the signal name)' },
      { name: 'name', description: 'the signal name (with --key: the payload)', optional: true },
      {
        name: 'payload-json',
        description: "the payload, as JSON matching the event's schema (default {})",
        optional: true,
      },
    ],
    options: [
      { flags: '--id <id>', description: 'the signal id: a second signal with it is a no-op' },
      {
        flags: '--graph <graph-file>',
        description:
          'the graph file (default: the one the run was started with; needed with --key)',
      },
      {
        flags: '--key <key>',
        description: "to whichever run of --graph waits under this key (its event's key)",
      },
      {
        flags: '--no-resume',
        description: 'record the signal only; continue later with `waymark resume`',
      },
    ],
    help: `
The payload is checked against the event node's schema. A signal to a run that waits for it is
delivered once and the run continues here (a worker's run is left to the worker); one sent
before the run reaches its event is kept (7 days) and taken when it does.

Examples:
  $ waymark signal 3f1c9a2e-... payment '{"paidCents":1200}' --id evt_123
  $ waymark signal --graph graphs/orders.ts --key o-7 payment '{"paidCents":1200}'`,
    load: async () => (await import('./commands/signal.js')).signal,
  },
  {
    name: 'signals',
    description: 'list the signals kept for runs that have not reached their event yet',
    args: [],
    options: [
      { flags: '--all', description: 'every signal: kept, taken and expired', default: false },
    ],
    help: '\nExample:\n  $ waymark signals --json',
    load: async () => (await import('./commands/signal.js')).signals,
  },
];
