import { WaymarkError } from '../../error/waymark-error.js';
import { patchState } from '../../runtime/ops/patch.js';
import { exitCode } from '../exit-code.js';
import type { Io } from '../io.js';
import { commandLine } from '../next.js';
import { graphOfRun, parseJson, withRunStore } from '../session.js';

/** The flags of `waymark patch`. */
export interface PatchFlags {
  readonly set: string;
  readonly reason: string;
  readonly by: string;
  readonly graph?: string;
  readonly asNode?: string;
}

/**
 * `waymark patch <run-id> --set <json> --reason <text>`: changes the state of a run that waits
 * or stopped, as one recorded step naming who and why; the run stays where it was.
 */
export async function patch(out: Io, runId: string, flags: PatchFlags): Promise<number> {
  const update = parseJson(flags.set, '--set');
  if (typeof update !== 'object' || update === null || Array.isArray(update)) {
    throw new WaymarkError('USAGE_INVALID', '--set takes an object of state fields, as JSON', {
      retryable: false,
    });
  }
  return withRunStore(out, runId, async (store) => {
    const graph = await graphOfRun(out, store, runId, flags.graph);
    const after = await patchState(store, graph, runId, update as Record<string, unknown>, {
      by: flags.by,
      reason: flags.reason,
      ...(flags.asNode !== undefined && { asNode: flags.asNode }),
    });
    const fields = Object.keys(update);
    out.json({
      type: 'patched',
      runId,
      fields,
      by: flags.by,
      reason: flags.reason,
      status: after.status,
    });
    out.line(`run ${out.c.bold(runId)}: ${fields.join(', ')} set by ${flags.by} (${flags.reason})`);
    // As a node's completion, the patch leaves the run paused before what follows that node.
    const next = after.status === 'waiting' && flags.asNode === undefined ? 'show' : 'resume';
    out.line(
      `it is ${after.status}${flags.asNode === undefined ? ', as it was' : `, after ${flags.asNode}`}: \`${commandLine(out, [next, runId])}\` ${next === 'show' ? 'shows its open wait' : 'continues it'}`,
    );
    return exitCode.succeeded;
  });
}
