import { WaymarkError } from '../../error/waymark-error.js';
import type { Commit, TaskRecord, TimerRecord, WaitRecord } from '../store.js';

/**
 * What applying a group of consecutive commits in order leaves, as one commit's waits, timers
 * and schedule: the head, status, error and lease release of the last commit, its snapshot (the
 * group's last one, wherever it is), and the net of the rest. A wait opened and closed in the
 * group is opened closed, at the time of the commit that closed it (so the waits are settled:
 * a store applies them without stamping again); a timer or task set after it
 * was cleared is set, one cleared after it was set is cleared. Only the group's events stay one
 * per commit (`seqs`, `ats`, `events`, `traces`).
 * @throws WaymarkError `STORE_CONFLICT` when the seqs are not consecutive or the epochs differ:
 *   such a group was not made by one driver of the run, and no part of it is written.
 *
 * @example
 * const { merged, seqs } = mergeGroup('r1', [first, second]);
 */
export function mergeGroup(runId: string, commits: readonly Commit[]): MergedGroup {
  const last = commits.at(-1)!;
  const epoch = commits[0]!.epoch ?? null;
  const opened = new Map<string, WaitRecord>();
  const closed = new Set<string>();
  const setTimers = new Map<string, TimerRecord>();
  const cleared = new Set<string>();
  const tasks = new Map<string, TaskRecord>();
  const cancelled = new Set<string>();
  const consumed = new Set<number>();
  let snapshot: { seq: number; data: string } | undefined;
  for (const [i, commit] of commits.entries()) {
    if (commit.seq !== commits[0]!.seq + i || (commit.epoch ?? null) !== epoch) {
      throw new WaymarkError(
        'STORE_CONFLICT',
        `a group of commits for run "${runId}" must have consecutive seqs and one epoch; commit ${i + 1} has seq ${commit.seq} and epoch ${commit.epoch ?? null}`,
        { retryable: false, details: { runId, attempted: commit.seq } },
      );
    }
    if (commit.snapshot !== null) snapshot = { seq: commit.seq, data: commit.snapshot };
    // Within one commit a wait opened and closed is opened closed, and what is both cleared and
    // set (a timer, a task) is set: the same order here.
    for (const wait of commit.waits?.open ?? []) {
      if (!opened.has(wait.requestId)) opened.set(wait.requestId, wait);
    }
    // A close reaches a wait from before the group (the statement's close) and one the group
    // opened (stamped here); a wait opened after a close of its id stays open, as in order.
    for (const requestId of commit.waits?.close ?? []) {
      closed.add(requestId);
      const wait = opened.get(requestId);
      if (wait !== undefined && wait.answer === null && !wait.closedAt)
        opened.set(requestId, { ...wait, closedAt: commit.at });
    }
    for (const id of commit.timers?.clear ?? []) {
      setTimers.delete(id);
      cleared.add(id);
    }
    for (const timer of commit.timers?.set ?? []) {
      setTimers.set(timer.id, timer);
      cleared.delete(timer.id);
    }
    for (const activation of commit.schedule?.cancel ?? []) {
      tasks.delete(activation);
      cancelled.add(activation);
    }
    for (const task of commit.schedule?.tasks ?? []) {
      tasks.set(task.activation, task);
      cancelled.delete(task.activation);
    }
    for (const id of commit.schedule?.consumed ?? []) consumed.add(id);
  }
  return {
    merged: {
      ...last,
      snapshot: snapshot?.data ?? null,
      waits: { open: [...opened.values()], close: [...closed] },
      timers: { set: [...setTimers.values()], clear: [...cleared] },
      schedule: { tasks: [...tasks.values()], cancel: [...cancelled], consumed: [...consumed] },
    },
    snapshotSeq: snapshot?.seq ?? last.seq,
    seqs: commits.map((c) => c.seq),
    ats: commits.map((c) => c.at),
    events: commits.map((c) => c.event),
    traces: commits.map((c) => c.trace),
  };
}

/** A group of commits as one: see {@link mergeGroup}. */
export interface MergedGroup {
  /** The last commit, carrying the group's net waits, timers, schedule and last snapshot. */
  readonly merged: Commit;
  /** The seq the group's snapshot (if any) belongs to. */
  readonly snapshotSeq: number;
  readonly seqs: readonly number[];
  readonly ats: readonly number[];
  readonly events: readonly string[];
  readonly traces: readonly (string | null)[];
}
