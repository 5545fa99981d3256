import type { Command } from 'commander';
import { WaymarkError } from '../../error/waymark-error.js';
import { type StoredStatus, storedStatuses } from '../../store/store.js';
import { exitCode } from '../exit.js';
import type { Io } from '../io.js';
import { withStore } from '../session.js';

const statuses: readonly StoredStatus[] = storedStatuses;

export function lsCommand(program: Command, io: () => Io, done: (code: number) => void) {
  program
    .command('ls')
    .description('list the runs in the database, newest first')
    .option('--status <status>', `only runs with this status (${statuses.join(', ')})`)
    .option('--graph <name>', 'only runs of the graph with this name')
    .option('--limit <n>', 'at most this many runs', '50')
    .addHelpText('after', '\nExample:\n  $ waymark ls --status waiting')
    .action(async (flags: { status?: string; graph?: string; limit: string }) => {
      const out = io();
      const status = flags.status;
      if (status !== undefined && !statuses.includes(status as StoredStatus)) {
        throw new WaymarkError(
          'USAGE_INVALID',
          `--status ${status} is not a run status; use one of ${statuses.join(', ')}`,
          { retryable: false },
        );
      }
      const limit = Number(flags.limit);
      if (!Number.isInteger(limit) || limit < 1) {
        throw new WaymarkError(
          'USAGE_INVALID',
          `--limit ${flags.limit} must be a whole number >= 1`,
          {
            retryable: false,
          },
        );
      }
      const runs = await withStore(out, (store) =>
        store.listRuns({
          ...(status !== undefined && { status: status as StoredStatus }),
          ...(flags.graph !== undefined && { graph: flags.graph }),
          limit,
        }),
      );
      out.json(
        runs.map((r) => ({
          id: r.id,
          graph: r.graph,
          status: r.status,
          seq: r.seq,
          createdAt: new Date(r.createdAt).toISOString(),
          updatedAt: new Date(r.updatedAt).toISOString(),
        })),
      );
      if (runs.length === 0) out.line('no runs');
      for (const r of runs) {
        out.line(
          `${r.id}  ${r.status.padEnd(9)}  ${r.graph.padEnd(16)}  ${String(r.seq).padStart(5)} events  ${new Date(r.updatedAt).toISOString()}`,
        );
      }
      done(exitCode.succeeded);
    });
}
