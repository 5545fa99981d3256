// The run log on PostgreSQL (RunLog in store.ts): runs, their events and snapshots. Each step's
// commit is one statement, fenced by the run's seq and lease epoch.

import { storeCorrupt } from '../../../error/store-corrupt.js';
import { WaymarkError } from '../../../error/waymark-error.js';
import type {
  Commit,
  LoadedRun,
  NewRun,
  RunFilter,
  RunRecord,
  RunUsage,
  StoredEvent,
} from '../../store.js';
import { storeFormatVersion } from '../../store.js';
import { mergeGroup } from '../commit-group.js';
import { leaseLost } from '../leases.js';
import { uniqueViolation } from '../pg-errors.js';
import { bigintParam, commitExtras, limitParam } from '../pg-params.js';
import { readPgRun } from '../pg-rows.js';
import type { Statement } from '../pg-sql.js';
import { Columns, checkHistory, type Row, readEvent, readSnapshot } from '../rows.js';
import type { PgConnection } from './connection.js';

/** How often a refused commit is tried again when the refusal no longer holds. */
const maxRetries = 3;

/** There is no such run in the store. */
export function runNotFound(runId: string): WaymarkError {
  return new WaymarkError('RUN_NOT_FOUND', `there is no run "${runId}"`, { retryable: false });
}

export async function createRun(db: PgConnection, run: NewRun): Promise<void> {
  const result = await db.query(db.sql.createRun, [
    run.id,
    run.graph,
    run.graphHash,
    run.graphVersion,
    run.stateVersion,
    storeFormatVersion,
    run.labels ?? null,
    run.createdAt,
    run.status,
    run.snapshot,
    run.sources ?? [],
  ]);
  if (result.rowCount === 0) {
    throw new WaymarkError('RUN_EXISTS', `run "${run.id}" exists already`, {
      retryable: false,
    });
  }
}

export async function commit(db: PgConnection, runId: string, commit: Commit): Promise<void> {
  const { seq, at, event, trace, status, error, snapshot } = commit;
  const epoch = commit.epoch ?? null;
  const release = commit.release === true && epoch !== null;
  const step = [runId, seq, at, event, trace, status, error, epoch];
  // Most steps carry no snapshot, wait or timer: the head moves and the event is appended.
  const { schedule } = commit;
  const scheduled =
    schedule !== undefined &&
    ((schedule.tasks?.length ?? 0) > 0 ||
      (schedule.cancel?.length ?? 0) > 0 ||
      (schedule.consumed?.length ?? 0) > 0);
  const simple =
    snapshot === null && commit.waits === undefined && commit.timers === undefined && !scheduled;
  const values = simple
    ? [...step, release]
    : [...step, snapshot, ...commitExtras(commit), release];
  for (let attempt = 1; ; attempt++) {
    const result = simple
      ? await db.query(db.sql.commitStep, values, damaged(runId, seq))
      : await db.query(db.sql.commitFull, values, damaged(runId, seq));
    if ((simple ? result.rowCount : result.rows[0]?.done) === 1) return;
    await refused(db, runId, seq, epoch, attempt);
  }
}

/**
 * Commits consecutive steps of one run in one statement, all or none: fenced as one commit is,
 * by the first one's seq and by their epoch (the same for all). A wait closed in the group
 * that was opened before it is stamped with the group's last time.
 * @throws WaymarkError as `commit` does, with nothing written.
 */
export async function commitAll(
  db: PgConnection,
  runId: string,
  commits: readonly Commit[],
): Promise<void> {
  if (commits.length === 0) return;
  if (commits.length === 1) return commit(db, runId, commits[0]!);
  const group = mergeGroup(runId, commits);
  const { merged } = group;
  const { seq, at, status, error, snapshot } = merged;
  const first = commits[0]!.seq;
  const epoch = merged.epoch ?? null;
  const release = merged.release === true && epoch !== null;
  const values = [
    ...[runId, seq, at, group.events, group.traces, status, error, epoch],
    snapshot,
    ...commitExtras(merged, true),
    release,
    group.seqs,
    group.ats,
    group.snapshotSeq,
  ];
  for (let attempt = 1; ; attempt++) {
    const result = await db.query(db.sql.commitGroup, values, damaged(runId, first));
    if (result.rows[0]?.done === 1) return;
    await refused(db, runId, first, epoch, attempt);
  }
}

/**
 * Why a commit at `seq` wrote nothing, as the contract names it (reading the run explains it,
 * and fails by itself if the run is gone or its row is damaged); returns when the run reached
 * seq - 1 between the two statements, so that the commit is in order now and is taken again.
 */
async function refused(
  db: PgConnection,
  runId: string,
  seq: number,
  epoch: number | null,
  attempt: number,
): Promise<void> {
  const run = await getRun(db, runId);
  if (run === undefined) throw runNotFound(runId);
  if (epoch !== null && run.lease?.epoch !== epoch) {
    throw leaseLost(runId, epoch, run.lease ?? undefined);
  }
  if (run.seq !== seq - 1 || attempt === maxRetries) {
    throw new WaymarkError(
      'STORE_CONFLICT',
      `run "${runId}" is at sequence ${run.seq}; a commit for ${seq} is stale or out of order`,
      { details: { runId, current: run.seq, attempted: seq } },
    );
  }
}

export async function snapshotAt(
  db: PgConnection,
  runId: string,
  seq: number,
): Promise<{ seq: number; data: string } | undefined> {
  const { rows } = await db.query(db.sql.snapshotAt, [runId, bigintParam(seq, -1)]);
  return rows[0] === undefined ? undefined : readSnapshot(rows[0], runId);
}

export async function loadRun(db: PgConnection, runId: string): Promise<LoadedRun | undefined> {
  const rows = await history(db, db.sql.loadRun, [runId]);
  if (rows === undefined) return undefined;
  return loaded(runId, rows);
}

export async function getRun(db: PgConnection, runId: string): Promise<RunRecord | undefined> {
  const { rows } = await db.query(db.sql.getRun, [runId]);
  return rows[0] === undefined ? undefined : readPgRun(rows[0], runId);
}

export async function listRuns(db: PgConnection, filter: RunFilter = {}): Promise<RunRecord[]> {
  const { rows } = await db.query(db.sql.listRuns, [
    filter.status === undefined ? null : [filter.status].flat(),
    filter.graph ?? null,
    limitParam(filter.limit),
    filter.labels === undefined ? null : JSON.stringify(filter.labels),
    filter.before?.createdAt ?? null,
    filter.before?.id ?? null,
    filter.since ?? null,
    filter.until ?? null,
  ]);
  // A row that cannot be read is left out rather than failing the whole listing: every other
  // run stays usable, and loading the bad one still says STORE_CORRUPT.
  return rows.flatMap((row) => {
    try {
      return [readPgRun(row, String(row.id))];
    } catch (error) {
      if ((error as { code?: unknown }).code === 'STORE_CORRUPT') return [];
      throw error;
    }
  });
}

export async function events(
  db: PgConnection,
  runId: string,
  afterSeq = 0,
): Promise<StoredEvent[]> {
  const after = Math.max(0, bigintParam(afterSeq, 0));
  const rows = await history(db, db.sql.events, [runId, after]);
  if (rows === undefined) throw runNotFound(runId);
  return [...checkHistory(readPgRun(rows.run, runId), rows.events, after)];
}

export async function usage(db: PgConnection, runId: string): Promise<RunUsage> {
  const { rows } = await db.query(db.sql.usage, [runId]);
  if (rows[0] === undefined) throw runNotFound(runId);
  const c = new Columns(rows[0], { runId, table: 'events' });
  return {
    events: c.integer('events'),
    eventBytes: c.integer('event_bytes'),
    snapshots: c.integer('snapshots'),
    snapshotBytes: c.integer('snapshot_bytes'),
  };
}

export async function history(
  db: PgConnection,

  statement: Statement,
  values: readonly unknown[],
): Promise<{ run: Row; events: StoredEvent[] } | undefined> {
  const { rows } = await db.query(statement, values);
  const run = rows.find((row) => row.part === 0);
  if (run === undefined) return undefined;
  const runId = String(values[0]);
  const events = rows
    .filter((row) => row.part === 1)
    .map((row) =>
      readEvent(
        { seq: row.event_seq, at: row.event_at, event: row.event, trace: row.trace },
        runId,
      ),
    )
    .sort((a, b) => a.seq - b.seq);
  return { run, events };
}

function damaged(runId: string, seq: number) {
  return (failure: unknown) => {
    const constraint = uniqueViolation(failure);
    if (constraint !== 'events_pkey' && constraint !== 'snapshots_pkey') return undefined;
    // The head accepted seq - 1; then a row of the run was already where this one goes.
    return storeCorrupt(runId, `it already has rows at seq ${seq}, past its seq ${seq - 1}`, {
      table: constraint.slice(0, -'_pkey'.length),
      key: seq,
    });
  };
}

export function loaded(runId: string, rows: { run: Row; events: StoredEvent[] }): LoadedRun {
  const run = readPgRun(rows.run, runId);
  if (run.format > storeFormatVersion) {
    throw new WaymarkError(
      'STORE_VERSION_UNSUPPORTED',
      `run "${runId}" cannot be loaded: it was written in store format ${run.format}, newer than this waymark reads (${storeFormatVersion})`,
      { retryable: false, details: { runId, table: 'runs', column: 'format' } },
    );
  }
  if (rows.run.snapshot_seq === null) {
    throw storeCorrupt(runId, 'it has no snapshot', { table: 'snapshots' });
  }
  const snapshot = readSnapshot(
    { seq: rows.run.snapshot_seq, data: rows.run.snapshot_data },
    runId,
  );
  if (snapshot.seq > run.seq) {
    throw storeCorrupt(
      runId,
      `its snapshot at seq ${snapshot.seq} is past the run's seq ${run.seq}`,
      {
        table: 'snapshots',
        key: snapshot.seq,
      },
    );
  }
  const events = checkHistory(run, rows.events, snapshot.seq);
  return { run, snapshot, events: [...events] };
}
