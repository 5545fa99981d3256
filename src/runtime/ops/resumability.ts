import type { Snapshot } from '../core/snapshot.js';

/** Whether `resume` continues a run, and if not, why. */
export type Resumability =
  | { readonly resumable: true }
  | {
      readonly resumable: false;
      /** `succeeded` (resume returns it as it is), `cancelled`, `nothing-left` or `past-deadline`. */
      readonly reason: 'succeeded' | 'cancelled' | 'nothing-left' | 'past-deadline';
      readonly why: string;
    };

/**
 * Whether `resume(store, graph, runId)` would continue a run in this checkpoint: the one rule
 * `resume` refuses by, and the `waymark` command's hints follow. A cancelled run never
 * continues; a stopped one does when it keeps something to run (a pending activation, or a
 * blocked decision: a visit cap, a router, a join), or it never started; a run that stopped on
 * its own past its deadline needs a new time limit. `now` is the caller's clock.
 *
 * @example
 * if (!resumability(snapshot, run.seq, Date.now()).resumable) suggestRewind();
 */
export function resumability(snapshot: Snapshot, seq: number, now: number): Resumability {
  switch (snapshot.status) {
    case 'succeeded':
      return { resumable: false, reason: 'succeeded', why: 'it succeeded' };
    case 'cancelled':
      return {
        resumable: false,
        reason: 'cancelled',
        why: 'it was cancelled, and a cancelled run stays cancelled',
      };
    case 'running':
    case 'waiting':
    case 'failed':
    case 'timed_out': {
      const neverStarted = seq === 0 && snapshot.status === 'running';
      if (snapshot.pending.length === 0 && !neverStarted) {
        const code = 'error' in snapshot ? ` on ${snapshot.error.code}` : '';
        return {
          resumable: false,
          reason: 'nothing-left',
          why: `it stopped${code} with nothing left to run`,
        };
      }
      const deadline = snapshot.limits.deadlineAt;
      const stoppedItself = snapshot.status === 'failed' || snapshot.status === 'timed_out';
      if (stoppedItself && deadline !== undefined && now >= deadline) {
        return {
          resumable: false,
          reason: 'past-deadline',
          why: `it is past its deadline (${new Date(deadline).toISOString()}); resume it with a new time limit (timeoutMs) to continue`,
        };
      }
      return { resumable: true };
    }
  }
}
