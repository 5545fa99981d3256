// The work queue on PostgreSQL (the work-queue interfaces in store.ts): the worker registry,
// claims of runs and tasks, task results into each run's inbox, and commits of many runs at
// once. The SQL is in pg-queue-sql.ts.

import { WaymarkError } from '../../../error/waymark-error.js';
import type {
  ClaimedTask,
  Commit,
  FinishedTask,
  InboxRecord,
  Lease,
  NewRun,
  RunGroup,
  WorkClaim,
  WorkerRecord,
} from '../../store.js';
import { isPlainGroup, storeFormatVersion } from '../../store.js';
import type { ClaimedRun } from '../../work-queue.js';
import { checkLeaseMs } from '../leases.js';
import { uniqueViolation } from '../pg-errors.js';
import { limitParam } from '../pg-params.js';
import { readInbox, readTask, readWorker } from '../queue-rows.js';
import { Columns, type Row, readEvent } from '../rows.js';
import type { PgConnection } from './connection.js';
import { loaded, loadRun, runNotFound } from './run-log.js';

export async function claimAndLoadRuns(db: PgConnection, claim: WorkClaim): Promise<ClaimedRun[]> {
  checkLeaseMs('(claim)', claim.leaseMs);
  const { rows } = await db.query(db.sql.claimAndLoad, runClaimValues(claim));
  const byRun = new Map<string, { run?: Row; events: Row[]; inbox: Row[] }>();
  for (const row of rows) {
    const runId = String(row.rid);
    let parts = byRun.get(runId);
    if (parts === undefined) {
      parts = { events: [], inbox: [] };
      byRun.set(runId, parts);
    }
    if (row.part === 0) parts.run = row;
    else if (row.part === 1) parts.events.push(row);
    else parts.inbox.push(row);
  }
  const claimed: ClaimedRun[] = [];
  for (const [runId, parts] of byRun) {
    const head = parts.run!;
    const lease = {
      runId,
      owner: claim.owner,
      epoch: Number(head.lease_epoch),
      expiresAt: Number(head.lease_expires_at),
    };
    try {
      const events = parts.events
        .map((row) =>
          readEvent(
            { seq: row.event_seq, at: row.event_at, event: row.event, trace: row.trace },
            runId,
          ),
        )
        .sort((a, b) => a.seq - b.seq);
      const items = parts.inbox
        .map((row) => readInbox(row, runId, 'inbox_'))
        .sort((a, b) => a.id - b.id);
      const last = events.at(-1)?.seq ?? Number(head.snapshot_seq);
      if (last < Number(head.seq)) {
        // The claim's UPDATE takes the run's newest row (it follows a row committed after the
        // statement began), while its reads see the statement's snapshot: a commit landing in
        // between leaves them short of the head. Not damage: read again, under the lease held
        // now. What is still short then is damage, and the second read says so.
        const again = await loadRun(db, runId);
        if (again === undefined) throw runNotFound(runId);
        claimed.push({ lease, run: again, inbox: await inbox(db, runId) });
        continue;
      }
      claimed.push({ lease, run: loaded(runId, { run: head, events }), inbox: items });
    } catch (error) {
      claimed.push({ lease, error });
    }
  }
  return claimed;
}

export async function registerWorker(
  db: PgConnection,
  worker: {
    readonly id: string;
    readonly host: string;
    readonly pid: number;
    readonly graphs: WorkerRecord['graphs'];
    readonly leaseMs: number;
  },
): Promise<void> {
  checkLeaseMs(worker.id, worker.leaseMs);
  await db.query(db.sql.registerWorker, [
    worker.id,
    worker.host,
    worker.pid,
    JSON.stringify(worker.graphs),
    worker.leaseMs,
  ]);
}

export async function unregisterWorker(db: PgConnection, id: string): Promise<void> {
  await db.query(db.sql.unregisterWorker, [id]);
}

export async function listWorkers(db: PgConnection): Promise<WorkerRecord[]> {
  const { rows } = await db.query(db.sql.listWorkers, []);
  return rows.map((row) => readWorker(row));
}

export async function claimTasks(db: PgConnection, claim: WorkClaim): Promise<ClaimedTask[]> {
  checkLeaseMs('(claim)', claim.leaseMs);
  const { rows } = await db.query(db.sql.claimTasks, [
    claim.graphs.map((g) => g.name),
    claim.graphs.map((g) => g.hash),
    limitParam(claim.limit),
    claim.owner,
    claim.leaseMs,
  ]);
  return rows.map(readTask);
}

export async function renewTasks(
  db: PgConnection,
  tasks: readonly ClaimedTask[],
  leaseMs: number,
): Promise<{ renewed: ClaimedTask[]; lost: string[] }> {
  if (tasks.length === 0) return { renewed: [], lost: [] };
  checkLeaseMs(tasks[0]!.runId, leaseMs);
  const { rows } = await db.query(db.sql.renewTasks, [
    tasks.map((t) => t.runId),
    tasks.map((t) => t.activation),
    tasks.map((t) => t.epoch),
    tasks[0]!.owner,
    leaseMs,
  ]);
  const held = new Map(
    rows.map((row) => [`${row.run_id}/${row.activation}`, Number(row.expires_at)]),
  );
  const renewed: ClaimedTask[] = [];
  const lost: string[] = [];
  for (const task of tasks) {
    const key = `${task.runId}/${task.activation}`;
    const expiresAt = held.get(key);
    if (expiresAt === undefined) lost.push(key);
    else renewed.push({ ...task, expiresAt });
  }
  return { renewed, lost };
}

export async function finishTasks(
  db: PgConnection,
  finished: readonly FinishedTask[],
  options: { readonly wake?: boolean } = {},
): Promise<boolean[]> {
  if (finished.length === 0) return [];
  const { rows } = await db.query(db.sql.finishTasks, [
    finished.map((f) => f.task.runId),
    finished.map((f) => f.task.activation),
    finished.map((f) => f.task.epoch),
    finished.map((f) => f.task.owner),
    finished.map((f) => f.attempt),
    finished.map((f) => f.at),
    options.wake ?? true,
  ]);
  const held = new Set(rows.map((row) => Number(row.n)));
  return finished.map((_, i) => held.has(i + 1));
}

export async function releaseTask(db: PgConnection, task: ClaimedTask): Promise<void> {
  await db.query(db.sql.releaseTask, [task.runId, task.activation, task.epoch, task.owner]);
}

export async function commitRuns(
  db: PgConnection,
  groups: readonly RunGroup[],
): Promise<boolean[]> {
  if (groups.length === 0) return [];
  const heads: unknown[][] = Array.from({ length: 10 }, () => []);
  const events: unknown[][] = Array.from({ length: 5 }, () => []);
  const consumed: unknown[][] = [[], []];
  for (const { runId, commits } of groups) {
    if (commits.length === 0 || !isPlainGroup(commits)) {
      throw new WaymarkError(
        'STORE_CONFLICT',
        `commitRuns takes plain groups of commits only; run "${runId}"'s is not one`,
        { retryable: false, details: { runId } },
      );
    }
    const last = commits.at(-1)!;
    const epoch = last.epoch ?? null;
    let snapshot: Commit | undefined;
    for (const [i, c] of commits.entries()) {
      if (c.seq !== commits[0]!.seq + i || (c.epoch ?? null) !== epoch) {
        throw new WaymarkError(
          'STORE_CONFLICT',
          `a group of commits for run "${runId}" must have consecutive seqs and one epoch`,
          { retryable: false, details: { runId, attempted: c.seq } },
        );
      }
      if (c.snapshot !== null) snapshot = c;
      const row = [runId, c.seq, c.at, c.event, c.trace];
      for (const [k, v] of row.entries()) events[k]!.push(v);
      for (const id of c.schedule?.consumed ?? []) {
        consumed[0]!.push(runId);
        consumed[1]!.push(id);
      }
    }
    const head = [
      runId,
      last.seq,
      commits.length,
      last.at,
      last.status,
      last.error,
      epoch,
      last.release === true && epoch !== null,
      snapshot?.snapshot ?? null,
      snapshot?.seq ?? null,
    ];
    for (const [k, v] of head.entries()) heads[k]!.push(v);
  }
  const { rows } = await db.query(db.sql.commitRuns, [...heads, ...events, ...consumed]);
  const held = new Set(rows.map((row) => String(row.id)));
  return groups.map((g) => held.has(g.runId));
}

export async function createRuns(
  db: PgConnection,
  runs: readonly NewRun[],
  options: { readonly wake?: boolean } = {},
): Promise<void> {
  if (runs.length === 0) return;
  const column = <T>(pick: (r: NewRun) => T) => runs.map(pick);
  await db.query(
    db.sql.createRuns,
    [
      column((r) => r.id),
      column((r) => r.graph),
      column((r) => r.graphHash),
      column((r) => r.graphVersion),
      column((r) => r.stateVersion),
      column((r) => r.labels ?? null),
      column((r) => r.createdAt),
      column((r) => r.status),
      column((r) => r.snapshot),
      storeFormatVersion,
      options.wake === true,
    ],
    (failure) => {
      if (uniqueViolation(failure) !== 'runs_pkey') return undefined;
      // The driver's detail names the id: "Key (id)=(r-7) already exists."
      const detail = (failure as { detail?: unknown }).detail;
      const id = typeof detail === 'string' ? /\(id\)=\((.*)\)/.exec(detail)?.[1] : undefined;
      // One run: what createRun says of it.
      return new WaymarkError(
        'RUN_EXISTS',
        runs.length === 1
          ? `run "${runs[0]!.id}" exists already`
          : `run "${id ?? '?'}" exists already (or is given twice): none of the ${runs.length} runs was recorded`,
        { retryable: false, ...(id !== undefined && { details: { runId: id } }) },
      );
    },
  );
}

export async function wake(db: PgConnection, runId: string, at: number): Promise<void> {
  await db.query(db.sql.wake, [runId, at]);
}

export async function inbox(db: PgConnection, runId: string): Promise<InboxRecord[]> {
  const { rows } = await db.query(db.sql.inbox, [runId]);
  return rows.map((row) => readInbox(row, runId));
}

export async function consume(
  db: PgConnection,
  runId: string,
  lease: Lease,
  ids: readonly number[],
): Promise<void> {
  if (ids.length === 0) return;
  await db.query(db.sql.consume, [runId, ids, lease.epoch, lease.owner]);
}

export async function listTasks(db: PgConnection, runId: string): Promise<ClaimedTask[]> {
  const { rows } = await db.query(db.sql.listTasks, [runId]);
  return rows.map(readTask);
}

/** The parameters of a claim of runs (claimAndLoad). */
function runClaimValues(claim: WorkClaim): unknown[] {
  return [
    claim.graphs.map((g) => g.name),
    claim.graphs.map((g) => g.hash),
    limitParam(claim.limit),
    claim.owner,
    claim.host ?? null,
    claim.pid ?? null,
    claim.leaseMs,
  ];
}

export async function foldFailed(
  db: PgConnection,
  lease: Lease,
  retryInMs: number,
): Promise<number> {
  const { rows } = await db.query(db.sql.foldFailed, [
    lease.runId,
    lease.epoch,
    lease.owner,
    retryInMs,
  ]);
  return rows.length === 0
    ? 0
    : new Columns(rows[0]!, { runId: lease.runId, table: 'runs' }).integer('fold_failures');
}

export async function failRun(
  db: PgConnection,
  lease: Lease,
  failure: { readonly error: string; readonly at: number },
): Promise<boolean> {
  const { rows } = await db.query(db.sql.failRun, [
    lease.runId,
    lease.epoch,
    lease.owner,
    failure.error,
    failure.at,
  ]);
  return rows.length > 0;
}
