import { rewind as rewindStored } from '../../runtime/local/rewind.js';
import { noteUpdate } from '../../runtime/ops/rewind-note.js';
import type { Io } from '../io.js';
import { withProgress } from '../progress.js';
import { reportRun } from '../report.js';
import { graphOfRun, locationOf, withRunStore } from '../session.js';

interface RewindFlags {
  readonly to: string;
  readonly note?: string;
  readonly noteField: string;
  readonly runId?: string;
  readonly graph?: string;
  readonly plan?: boolean;
}

/** `waymark rewind <run-id> --to <node>`: a new run from the checkpoint before the node. */
export async function rewind(out: Io, runId: string, flags: RewindFlags): Promise<number> {
  return withRunStore(out, runId, async (store) => {
    const graph = await graphOfRun(out, store, runId, flags.graph);
    const update =
      flags.note === undefined
        ? undefined
        : noteUpdate(graph, flags.note, flags.noteField, {
            code: 'USAGE_INVALID',
            option: '--note-field',
          });
    if (flags.plan === true) {
      const [{ planRewind }, { printPlan }] = await Promise.all([
        import('../../runtime/ops/plan.js'),
        import('./plan.js'),
      ]);
      const options = { to: flags.to, ...(update !== undefined && { update }) };
      return printPlan(out, await planRewind(store, graph, runId, options));
    }
    const newRunId = flags.runId ?? crypto.randomUUID();
    const result = await withProgress(
      out,
      newRunId,
      (live) =>
        rewindStored(store, graph, runId, {
          to: flags.to,
          runId: newRunId,
          ...(update !== undefined && { update }),
          ...live,
        }),
      () => {
        out.json({ type: 'run-started', runId: newRunId, graph: graph.name, db: locationOf(out) });
        out.line(`rewinding ${runId} to ${flags.to}, as a new run ${out.c.bold(newRunId)}`);
      },
    );
    out.about.runId = newRunId;
    return reportRun(out, store, result);
  });
}
