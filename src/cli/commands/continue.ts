import { WaymarkError } from '../../error/waymark-error.js';
import { threadLabel } from '../../runtime/ops/labels.js';
import { continueThread } from '../../runtime/ops/thread.js';
import type { Io } from '../io.js';
import { commandLine } from '../next.js';
import { withProgress } from '../progress.js';
import { reportRun } from '../report.js';
import { graphFileLabel, graphOfRun, locationOf, whereIs, withRunStore } from '../session.js';
import { readInput } from './run.js';

/** The flags of `waymark continue`. */
export interface ContinueFlags {
  readonly input?: string;
  readonly inputFile?: string;
  readonly runId?: string;
  readonly graph?: string;
}

/**
 * `waymark continue <run-id>`: the next run of a finished run's thread, from its final state
 * with the input applied through the reducers, with live progress like `run`.
 */
export async function continueRun(out: Io, runId: string, flags: ContinueFlags): Promise<number> {
  const given = readInput(flags) ?? {};
  if (typeof given !== 'object' || given === null || Array.isArray(given)) {
    throw new WaymarkError(
      'USAGE_INVALID',
      "the input of a thread's next run is an object of state fields",
      {
        retryable: false,
      },
    );
  }
  return withRunStore(out, runId, async (store) => {
    const graph = await graphOfRun(out, store, runId, flags.graph);
    const next = flags.runId ?? crypto.randomUUID();
    const result = await withProgress(
      out,
      next,
      (live) =>
        continueThread(store, graph, runId, given as Record<string, unknown>, {
          runId: next,
          ...(out.about.graphFile !== undefined && {
            labels: { [graphFileLabel]: out.about.graphFile },
          }),
          ...live,
        }),
      () => {
        out.about.runId = next;
        out.json({ type: 'run-started', runId: next, graph: graph.name, db: locationOf(out) });
        out.line(
          `run ${out.c.bold(next)} continues the thread of run ${runId}, checkpoints in ${whereIs(store)}`,
        );
      },
    );
    const record = await store.getRun(next);
    const thread =
      record === undefined ? undefined : JSON.parse(record.labels ?? '{}')[threadLabel];
    if (thread !== undefined)
      out.line(
        `thread ${thread}: \`${commandLine(out, ['ls', '--thread', thread])}\` lists its runs`,
      );
    return reportRun(out, store, result);
  });
}
