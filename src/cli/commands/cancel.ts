import type { Command } from 'commander';
import { cancel } from '../../runtime/cancel.js';
import { exitCode } from '../exit.js';
import type { Io } from '../io.js';
import { graphOfRun, withRunStore } from '../session.js';

export function cancelCommand(program: Command, io: () => Io, done: (code: number) => void) {
  program
    .command('cancel')
    .description('cancel a run for good: a cancelled run is never resumed')
    .argument('<run-id>')
    .option('--reason <text>', 'why: recorded with the run', 'cancelled with the waymark command')
    .option('--graph <graph-file>', 'the graph file (default: the one the run was started with)')
    .addHelpText(
      'after',
      '\nExample:\n  $ waymark cancel 3f1c9a2e-... --reason "the release was pulled"',
    )
    .action(async (runId: string, flags: { reason: string; graph?: string }) => {
      const out = io();
      await withRunStore(out, runId, async (store) => {
        const graph = await graphOfRun(store, runId, flags.graph);
        const after = await cancel(store, graph, runId, { reason: flags.reason });
        out.json({ type: 'cancelled', runId, status: after.status });
        out.line(`run ${out.c.bold(runId)} ${out.c.yellow('cancelled')}: ${flags.reason}`);
      });
      done(exitCode.succeeded);
    });
}
