import { cancel as cancelRun } from '../../runtime/ops/cancel.js';
import { exitCode } from '../exit-code.js';
import type { Io } from '../io.js';
import { graphOfRun, withRunStore } from '../session.js';

/** `waymark cancel <run-id>`: a cancelled run is never resumed. */
export async function cancel(
  out: Io,
  runId: string,
  flags: { readonly reason: string; readonly graph?: string },
): Promise<number> {
  await withRunStore(out, runId, async (store) => {
    const graph = await graphOfRun(out, store, runId, flags.graph);
    const after = await cancelRun(store, graph, runId, { reason: flags.reason });
    out.json({ type: 'cancelled', runId, status: after.status });
    out.line(`run ${out.c.bold(runId)} ${out.c.yellow('cancelled')}: ${flags.reason}`);
  });
  return exitCode.succeeded;
}
