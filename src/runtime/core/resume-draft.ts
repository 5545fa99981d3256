import { restart } from './activations.js';
import type { ResumeDraft } from './draft.js';
import { reviveBranch, settleAgain } from './fan-out.js';
import type { RunEvent } from './snapshot.js';

/**
 * Continues a stopped or interrupted run. Pending activations run again: a failed one with a
 * fresh retry budget (attempt 1), an interrupted one with the attempt it never finished, a
 * failed branch's with its branch running again. Blocked decisions are taken again under this
 * graph: a capped activation is admitted if the cap allows it now, a completed activation's
 * router runs again, an undecided join settles again. Waits are recorded again (idempotently)
 * and keep waiting for their answer. The checkpoint is restamped with this graph.
 *
 * @example
 * const t = new Transition(graph, snapshot); resumeDraft(t, { type: 'resumed' }); t.result();
 */
export function resumeDraft(d: ResumeDraft, event: Extract<RunEvent, { type: 'resumed' }>): void {
  const fresh = d.resumeUnder(event);
  const entries = d.pending;
  d.pending = [];
  for (const entry of entries) {
    // Taking one decision again may stop the run once more (the cap still holds): the rest wait.
    if (!d.running) {
      d.pending.push(entry);
      continue;
    }
    const activation = fresh && entry.blocked === undefined ? restart(entry) : entry;
    // A branch that failed and stopped the run at its join runs again from where it failed.
    const ref = activation.branch;
    if (ref !== undefined && d.fanOuts[ref.fanOut]?.branches[ref.index]?.status === 'failed')
      reviveBranch(d, ref);
    const { blocked: kind, ...unblocked } = activation;
    switch (kind) {
      case 'enqueue':
        d.admit({ ...unblocked, attempt: 1 });
        break;
      case 'route':
        d.moveOn(unblocked);
        break;
      case 'settle':
        settleAgain(d, activation.parent!);
        break;
      case 'branch':
        d.schedule(restart(unblocked));
        break;
      case undefined:
        d.schedule(activation);
        break;
    }
  }
}
