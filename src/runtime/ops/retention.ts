import { WaymarkError } from '../../error/waymark-error.js';
import { type Duration, parseDuration } from '../../graph/duration.js';
import { type FinishedStatus, finishedStatuses } from '../../graph/retention.js';
import type { DeletedRun, DeleteOptions } from '../../store/run-removal.js';
import type { RunPosition, RunRecord, Store } from '../../store/store.js';
import { type Clock, systemClock } from '../clock.js';
import { threadLabel } from './labels.js';

/**
 * Deletes a stored run and everything it owns (history, snapshots, waits, effects, memos,
 * timers, queued work), in one transaction of the store.
 * @throws WaymarkError `RUN_NOT_FOUND`; `RUN_LIVE` (running, or driven now); `RUN_WAITING` (it
 *   waits, and `force` was not given); `RUN_REFERENCED` (an unfinished run reuses it or was
 *   rewound from it). A refused delete deletes nothing.
 *
 * @example
 * await deleteRun(store, runId);
 */
export function deleteRun(
  store: Store,
  runId: string,
  options: DeleteOptions = {},
): Promise<DeletedRun> {
  return store.deleteRun(runId, options);
}

/**
 * Deletes a thread (docs/threads.md; LangGraph's `deleteThread`): its first run, whose id is
 * the thread's, and every later run labelled with it, newest first, each in one transaction.
 * Every run is checked first, so a thread with a live run (or a waiting one, without `force`)
 * is refused before anything is deleted.
 * @throws WaymarkError `RUN_NOT_FOUND` (no run of that thread), and what {@link deleteRun} throws.
 *
 * @example
 * const gone = await deleteThread(store, first.runId);
 */
export async function deleteThread(
  store: Store,
  threadId: string,
  options: DeleteOptions = {},
): Promise<DeletedRun[]> {
  const runs = await threadRuns(store, threadId);
  if (runs.length === 0) {
    throw new WaymarkError('RUN_NOT_FOUND', `there is no thread "${threadId}"`, {
      retryable: false,
      details: { threadId },
    });
  }
  for (const run of runs) {
    const live = run.status === 'running' || run.lease?.live === true;
    if (live || (run.status === 'waiting' && options.force !== true)) {
      // The store's own refusal, with its code and words.
      await store.deleteRun(run.id, options);
    }
  }
  const deleted: DeletedRun[] = [];
  for (const run of runs) deleted.push(await store.deleteRun(run.id, options));
  return deleted;
}

/** The thread's runs, newest first, its first run (whose id is the thread's) last. */
async function threadRuns(store: Store, threadId: string): Promise<RunRecord[]> {
  const later: RunRecord[] = [];
  let before: RunPosition | undefined;
  for (;;) {
    const page = await store.listRuns({
      labels: { [threadLabel]: threadId },
      limit: 200,
      ...(before && { before }),
    });
    later.push(...page);
    if (page.length < 200) break;
    before = { createdAt: page.at(-1)!.createdAt, id: page.at(-1)!.id };
  }
  const first = await store.getRun(threadId);
  return first === undefined ? later : [...later.filter((r) => r.id !== threadId), first];
}

/** Options of {@link prune}. */
export interface PruneOptions {
  /** Which finished runs: one status or several (`succeeded`, `failed`, `cancelled`, `timed_out`). */
  readonly status: FinishedStatus | readonly FinishedStatus[];
  /** Runs that finished longer ago than this (`'30d'`, or ms). */
  readonly olderThan: Duration | string;
  /** Only runs of this graph. */
  readonly graph?: string;
  /** At most this many deleted in one call (default 1,000): a sweep's bounded batch. */
  readonly limit?: number;
  /** List what would be deleted, and delete nothing. */
  readonly dryRun?: boolean;
  readonly clock?: Clock;
}

/** What {@link prune} did: the runs it deleted (or would), and those it left, with why. */
export interface PruneResult {
  readonly deleted: readonly DeletedRun[];
  /** Runs that matched but were refused (a live run reuses one), with the refusal's code. */
  readonly kept: readonly { readonly id: string; readonly code: string }[];
  /** The limit stopped it: more runs match. */
  readonly more: boolean;
}

/**
 * Deletes finished runs that finished (their last commit) longer ago than `olderThan`, oldest
 * listing page first, each in one transaction: `waymark prune`, and the retention sweep of
 * workers and `waymark serve`. A run refused (RUN_REFERENCED: an unfinished run was started
 * from it) is kept and named in `kept`; the others go on.
 * @throws WaymarkError `OPTIONS_INVALID` for a status that is not a finished one, or a limit
 *   that is not a whole number >= 1; `DECLARATION_INVALID` for an `olderThan` that is not a duration.
 *
 * @example
 * const { deleted } = await prune(store, { status: 'succeeded', olderThan: '30d' });
 */
export async function prune(store: Store, options: PruneOptions): Promise<PruneResult> {
  const statuses = typeof options.status === 'string' ? [options.status] : [...options.status];
  const wrong = statuses.find((s) => !(finishedStatuses as readonly string[]).includes(s));
  if (statuses.length === 0 || wrong !== undefined) {
    throw bad(
      `prune status ${JSON.stringify(wrong ?? options.status)}: give one or more of ${finishedStatuses.join(', ')}; a running or waiting run is deleted one by one (deleteRun, with force)`,
    );
  }
  const limit = options.limit ?? 1_000;
  if (!(Number.isInteger(limit) && limit >= 1))
    throw bad(`prune limit ${limit}: a whole number >= 1`);
  const cutoff =
    (options.clock ?? systemClock).now() - parseDuration(options.olderThan, 'prune olderThan');
  const deleted: DeletedRun[] = [];
  const kept: { id: string; code: string }[] = [];
  let before: RunPosition | undefined;
  // Created before the cutoff is a bound: a run finishes after it starts.
  for (;;) {
    const page = await store.listRuns({
      status: statuses,
      until: cutoff,
      limit: 200,
      ...(options.graph !== undefined && { graph: options.graph }),
      ...(before && { before }),
    });
    for (const run of page) {
      if (run.updatedAt >= cutoff) continue;
      if (deleted.length >= limit) return { deleted, kept, more: true };
      if (options.dryRun === true) {
        deleted.push({
          id: run.id,
          graph: run.graph,
          status: run.status,
          createdAt: run.createdAt,
        });
        continue;
      }
      try {
        deleted.push(await store.deleteRun(run.id));
      } catch (error) {
        // Gone already (another pruner), or refused: the rest go on.
        const code = (error as { code?: unknown }).code;
        if (code === 'RUN_NOT_FOUND') continue;
        if (code !== 'RUN_REFERENCED' && code !== 'RUN_LIVE') throw error;
        kept.push({ id: run.id, code });
      }
    }
    if (page.length < 200) return { deleted, kept, more: false };
    before = { createdAt: page.at(-1)!.createdAt, id: page.at(-1)!.id };
  }
}

function bad(message: string): WaymarkError {
  return new WaymarkError('OPTIONS_INVALID', message, { retryable: false });
}
