import { WaymarkError } from '../../error/waymark-error.js';
import { parseDuration } from '../../graph/duration.js';
import { type FinishedStatus, finishedStatuses } from '../../graph/retention.js';
import { deleteRun, deleteThread, prune as pruneRuns } from '../../runtime/ops/retention.js';
import type { DeletedRun } from '../../store/run-removal.js';
import { exitCode } from '../exit-code.js';
import type { Io } from '../io.js';
import { withExistingStore, withRunStore } from '../session.js';
import { iso } from '../time.js';

/** `waymark rm <run-id>` (or `--thread`): deletes a run, or a thread's runs, with all they own. */
export async function rm(
  out: Io,
  runId: string,
  flags: { readonly thread?: boolean; readonly force?: boolean },
): Promise<number> {
  const options = { force: flags.force === true };
  await withRunStore(out, runId, async (store) => {
    const gone =
      flags.thread === true
        ? await deleteThread(store, runId, options)
        : [await deleteRun(store, runId, options)];
    out.json({ type: 'deleted', runs: gone.map(runJson) });
    for (const run of gone)
      out.line(`run ${out.c.bold(run.id)} (${run.status}) ${out.c.yellow('deleted')}`);
  });
  return exitCode.succeeded;
}

/** `waymark prune --status <s> --older-than <duration>`: deletes finished runs past an age. */
export async function prune(
  out: Io,
  flags: {
    readonly status: string;
    readonly olderThan: string;
    readonly graph?: string;
    readonly limit: string;
    readonly dryRun?: boolean;
  },
): Promise<number> {
  const statuses = flags.status.split(',').map((s) => s.trim());
  const wrong = statuses.find((s) => !(finishedStatuses as readonly string[]).includes(s));
  if (wrong !== undefined) {
    throw usage(
      `--status ${wrong} is not a status a run ends with; use one or more of ${finishedStatuses.join(', ')} (comma-separated)`,
    );
  }
  try {
    parseDuration(flags.olderThan);
  } catch {
    throw usage(`--older-than ${flags.olderThan} is not a length of time; e.g. 30d, 12h, 90m`);
  }
  const limit = Number(flags.limit);
  if (!Number.isInteger(limit) || limit < 1)
    throw usage(`--limit ${flags.limit} must be a whole number >= 1`);
  const dryRun = flags.dryRun === true;
  const found = await withExistingStore(out, (store) =>
    pruneRuns(store, {
      status: statuses as FinishedStatus[],
      olderThan: flags.olderThan,
      limit,
      dryRun,
      ...(flags.graph !== undefined && { graph: flags.graph }),
    }),
  );
  const result = found?.value ?? { deleted: [], kept: [], more: false };
  out.json({
    type: 'pruned',
    dryRun,
    runs: result.deleted.map(runJson),
    kept: result.kept.map((k) => ({ runId: k.id, code: k.code })),
    more: result.more,
  });
  const verb = dryRun ? 'would delete' : 'deleted';
  for (const run of result.deleted)
    out.line(`${verb} ${out.c.bold(run.id)} (${run.graph}, ${run.status})`);
  for (const kept of result.kept) out.line(`kept ${out.c.bold(kept.id)}: ${kept.code}`);
  out.line(
    `${result.deleted.length} run${result.deleted.length === 1 ? '' : 's'} ${verb}${result.more ? ` (more match: run it again, or raise --limit)` : ''}`,
  );
  return exitCode.succeeded;
}

function runJson(run: DeletedRun) {
  return { runId: run.id, graph: run.graph, status: run.status, createdAt: iso(run.createdAt) };
}

function usage(message: string): WaymarkError {
  return new WaymarkError('USAGE_INVALID', message, { retryable: false });
}
