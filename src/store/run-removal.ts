import { WaymarkError } from '../error/waymark-error.js';
import type { StoredStatus } from './store.js';

/**
 * Deleting runs: one transaction removes every row a run owns (its history, snapshots, waits,
 * effects, memos, timers, lease, tasks, inbox, and the runs it was started from), after the
 * checks below, made inside that transaction so that no claim, resume or answer slips between
 * the check and the delete. Errors: RUN_NOT_FOUND, RUN_LIVE, RUN_WAITING, RUN_REFERENCED.
 */
export interface RunRemoval {
  /**
   * Deletes the run and everything it owns, all or nothing. Refused (nothing deleted) when the
   * run is `running` or held under a live lease, or has a task a worker holds (RUN_LIVE); when
   * it is `waiting`, unless `force` (RUN_WAITING: its person, event or timer would never be
   * answered); when a run that has not finished was started from it, by `reuseFrom` or a
   * rewind (RUN_REFERENCED).
   */
  deleteRun(runId: string, options?: DeleteOptions): Promise<DeletedRun>;
}

/** Options of {@link RunRemoval.deleteRun}. */
export interface DeleteOptions {
  /** Delete a `waiting` run too: its open waits and timers go with it. Never a live one. */
  readonly force?: boolean;
}

/** A run as it was when it was deleted. */
export interface DeletedRun {
  readonly id: string;
  readonly graph: string;
  readonly status: StoredStatus;
  readonly createdAt: number;
}

/** What a store reads about a run, in the delete's transaction, before it deletes it. */
export interface RemovalFacts {
  readonly runId: string;
  readonly status: StoredStatus;
  /** The run's lease is held and not expired by the store's clock. */
  readonly leaseLive: boolean;
  /** A task of the run is claimed by a worker whose task lease has not expired. */
  readonly taskLive: boolean;
  /** Runs started from this one (reuse, rewind) that are still running or waiting. */
  readonly referrers: readonly string[];
}

/**
 * The refusal a delete meets, if any: every store applies these rules to the facts it read in
 * the delete's own transaction.
 *
 * @example
 * const refused = removalRefusal(facts, options);
 * if (refused) throw refused;
 */
export function removalRefusal(
  facts: RemovalFacts,
  options: DeleteOptions = {},
): WaymarkError | undefined {
  const { runId, status } = facts;
  if (status === 'running' || facts.leaseLive || facts.taskLive) {
    const why =
      status === 'running'
        ? 'is running'
        : facts.leaseLive
          ? 'is held under a live lease'
          : 'has a task a worker is running';
    return new WaymarkError(
      'RUN_LIVE',
      `run "${runId}" ${why}: a live run is never deleted; cancel it, or wait for it to stop`,
      { retryable: false, details: { runId, status } },
    );
  }
  if (facts.referrers.length > 0) {
    return new WaymarkError(
      'RUN_REFERENCED',
      `run "${runId}" is read by ${facts.referrers.map((r) => `"${r}"`).join(', ')}, started from it and not finished: delete it once they finish`,
      { retryable: false, details: { runId, referrers: [...facts.referrers] } },
    );
  }
  if (status === 'waiting' && options.force !== true) {
    return new WaymarkError(
      'RUN_WAITING',
      `run "${runId}" is waiting: deleting it drops what it waits for (an answer, an event, a timer); pass force to delete it all the same`,
      { retryable: false, details: { runId, status } },
    );
  }
  return undefined;
}

/** The refusal of a delete of a run the store does not have. */
export function noSuchRun(runId: string): WaymarkError {
  return new WaymarkError('RUN_NOT_FOUND', `there is no run "${runId}" to delete`, {
    retryable: false,
    details: { runId },
  });
}
