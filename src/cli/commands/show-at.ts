import { WaymarkError } from '../../error/waymark-error.js';
import { history } from '../../runtime/ops/states.js';
import { exitCode } from '../exit-code.js';
import type { Io } from '../io.js';
import { graphOfRun, withRunStore } from '../session.js';
import { iso } from '../time.js';

/**
 * `waymark show <run-id> --at <seq> [--diff]`: the run's state after one step of its history,
 * replayed through its graph from the snapshot before it; with --diff, the fields that step
 * changed, before and after.
 */
export async function showAt(
  out: Io,
  runId: string,
  flags: { readonly graph?: string; readonly at: string; readonly diff?: boolean },
): Promise<number> {
  const seq = Number(flags.at);
  if (!/^\d+$/.test(flags.at) || !Number.isSafeInteger(seq)) {
    throw new WaymarkError(
      'USAGE_INVALID',
      `--at takes a step's seq (a whole number >= 0, as \`waymark watch\` and \`show --json\` number them), not "${flags.at}"`,
      { retryable: false },
    );
  }
  return withRunStore(out, runId, async (store) => {
    const graph = await graphOfRun(out, store, runId, flags.graph);
    const record = (await store.getRun(runId))!;
    if (seq > record.seq) {
      throw new WaymarkError(
        'USAGE_INVALID',
        `run "${runId}" has ${record.seq} step(s): --at takes 0 to ${record.seq}, not ${seq}`,
        { retryable: false, details: { reason: 'no-such-step', steps: record.seq } },
      );
    }
    const { steps } = await history(store, graph, runId, {
      ...(seq > 0 && { after: seq - 2 }),
      limit: 2,
    });
    const at = steps.find((s) => s.seq === seq)!;
    const before = steps.find((s) => s.seq === seq - 1);
    const state = at.state as Record<string, unknown>;
    const changed =
      flags.diff === true
        ? Object.keys({ ...before?.state, ...state })
            .filter((k) => JSON.stringify(before?.state[k]) !== JSON.stringify(state[k]))
            .map((field) => ({ field, before: before?.state[field] ?? null, after: state[field] }))
        : undefined;
    out.json({
      type: 'run-at',
      runId,
      seq,
      at: iso(at.at),
      event: at.event,
      ...(at.activation !== undefined && { activation: at.activation }),
      status: at.status,
      state,
      ...(changed !== undefined && { changed }),
    });
    const { c } = out;
    const what = at.activation === undefined ? at.event : `${at.event} ${at.activation}`;
    out.line(`run      ${c.bold(runId)} at step ${seq} of ${record.seq}`);
    out.line(`step     ${what}, ${iso(at.at)}`);
    out.line(`status   ${at.status}`);
    if (changed !== undefined) {
      out.line(
        `changed  ${changed.length === 0 ? 'nothing' : changed.map((d) => d.field).join(', ')}`,
      );
      for (const d of changed) {
        out.line(`  ${d.field}`);
        out.line(`    ${c.red(`- ${JSON.stringify(d.before)}`)}`);
        out.line(`    ${c.green(`+ ${JSON.stringify(d.after)}`)}`);
      }
    }
    out.line('state');
    for (const line of JSON.stringify(state, null, 2).split('\n')) out.line(`  ${line}`);
    return exitCode.succeeded;
  });
}
