import { WaymarkError } from '../../error/waymark-error.js';
import type { Commit, RunFilter, RunPosition, RunRecord } from '../store.js';
import type { LeaseRow } from './leases.js';

/** Whether a run's labels (JSON, or null) hold every wanted label with its value. */
export function hasLabels(labels: string | null, wanted: RunFilter['labels']): boolean {
  if (wanted === undefined) return true;
  let have: Record<string, unknown>;
  try {
    have = labels === null ? {} : (JSON.parse(labels) as Record<string, unknown>);
  } catch {
    return false;
  }
  return Object.entries(wanted).every(([key, value]) => have[key] === value);
}

/** The runs `filter` lists, newest first (ties by id, larger first), as every store lists them. */
export function listed(runs: readonly RunRecord[], filter: RunFilter): RunRecord[] {
  const statuses = filter.status === undefined ? undefined : new Set([filter.status].flat());
  const kept = runs
    .filter(
      (r) =>
        (statuses === undefined || statuses.has(r.status)) &&
        (filter.graph === undefined || r.graph === filter.graph) &&
        hasLabels(r.labels, filter.labels) &&
        (filter.before === undefined || isAfter(r, filter.before)) &&
        (filter.since === undefined || r.createdAt >= filter.since) &&
        (filter.until === undefined || r.createdAt < filter.until),
    )
    .sort((a, b) => b.createdAt - a.createdAt || (a.id < b.id ? 1 : -1));
  return filter.limit === undefined ? kept : kept.slice(0, Math.max(0, filter.limit));
}

/** Whether a run comes after `position` in a listing (older, or as old with a smaller id). */
export function isAfter(run: RunRecord, position: RunPosition): boolean {
  return (
    run.createdAt < position.createdAt ||
    (run.createdAt === position.createdAt && run.id < position.id)
  );
}

export function pickLease(row: LeaseRow): { epoch: number; expiresAt: number } {
  return { epoch: row.epoch, expiresAt: row.expiresAt };
}

/** Refuses a group whose seqs do not follow each other, or whose commits differ in epoch. */
export function checkGroup(runId: string, commits: readonly Commit[]): void {
  const epoch = commits[0]!.epoch ?? null;
  for (const [i, c] of commits.entries()) {
    if (c.seq !== commits[0]!.seq + i || (c.epoch ?? null) !== epoch) {
      throw new WaymarkError(
        'STORE_CONFLICT',
        `a group of commits for run "${runId}" must have consecutive seqs and one epoch`,
        { retryable: false, details: { runId, attempted: c.seq } },
      );
    }
  }
}
