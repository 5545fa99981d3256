// The SQLite store's work queue (work-queue.ts): several `waymark worker` processes on one
// machine share the file. Every write is one BEGIN IMMEDIATE transaction, so claims never take
// a row twice; every claim takes a lease epoch that fences what its holder writes; leases expire
// by the store's clock. SQLite has no NOTIFY: a worker in another process learns of work by
// polling (`listening` is false), one in this process is told at once.

import type Database from 'better-sqlite3';
import { WaymarkError } from '../../error/waymark-error.js';
import type {
  ClaimedTask,
  Commit,
  FinishedTask,
  InboxRecord,
  Lease,
  LoadedRun,
  NewRun,
  RunGroup,
  WorkClaim,
  WorkerRecord,
} from '../store.js';
import { isPlainGroup } from '../store.js';
import type { ClaimedRun, WorkKind, WorkQueue } from '../work-queue.js';
import { checkLeaseMs } from './leases.js';
import { LocalSignals } from './local-signals.js';
import { readInbox, readTask, readWorker } from './queue-rows.js';
import type { Row } from './rows.js';
import { queueStatements } from './sqlite-queue-sql.js';

type QueueStatements = { readonly [K in keyof typeof queueStatements]: Database.Statement };

/** What the queue needs of its store: its clock, its transactions and its run writes. */
export interface SqliteHost {
  now(): number;
  /** Runs `fn` in one BEGIN IMMEDIATE transaction. */
  write<T>(fn: () => T): T;
  /** The run as loadRun reads it, inside the caller's transaction. */
  loaded(runId: string): LoadedRun | undefined;
  /** Takes the run's lease at epoch + 1 for the claim, inside the caller's transaction. */
  lease(runId: string, claim: WorkClaim, now: number): Lease;
  /** Writes a new run, inside the caller's transaction; RUN_EXISTS for one that exists. */
  create(run: NewRun): void;
  /** Writes one commit, fenced, inside the caller's transaction. */
  commit(runId: string, commit: Commit): void;
}

export class SqliteQueue {
  readonly #host: SqliteHost;
  readonly #sql: QueueStatements;
  readonly #signals = new LocalSignals();

  constructor(db: Database.Database, host: SqliteHost) {
    this.#host = host;
    this.#sql = Object.fromEntries(
      Object.entries(queueStatements).map(([name, sql]) => [name, db.prepare(sql)]),
    ) as unknown as QueueStatements;
  }

  /** What a commit schedules, cancels and consumes, in the commit's transaction. */
  scheduleIn(runId: string, schedule: Commit['schedule']): void {
    if (schedule === undefined) return;
    const now = this.#host.now();
    for (const t of schedule.tasks ?? [])
      this.#sql.scheduleTask.run({
        runId,
        activation: t.activation,
        attempt: t.attempt,
        node: t.node,
        graph: t.graph,
        graphHash: t.graphHash,
        notBefore: t.notBefore,
        input: t.input,
        now,
      });
    for (const activation of schedule.cancel ?? []) this.#sql.cancelTask.run(runId, activation);
    for (const id of schedule.consumed ?? []) this.#sql.consumeOne.run(runId, id);
  }

  /** Tells this process's waiters what a write that committed scheduled. */
  told(schedule: Commit['schedule']): void {
    if ((schedule?.tasks?.length ?? 0) > 0) this.#signals.tell('tasks');
  }

  readonly registerWorker: WorkQueue['registerWorker'] = async (worker) => {
    checkLeaseMs(worker.id, worker.leaseMs);
    const expiresAt = this.#host.now() + Math.ceil(worker.leaseMs);
    const graphs = JSON.stringify(worker.graphs.map((g) => ({ name: g.name, hash: g.hash })));
    this.#host.write(() =>
      this.#sql.registerWorker.run(worker.id, worker.host, worker.pid, graphs, expiresAt),
    );
  };

  readonly unregisterWorker = async (id: string): Promise<void> => {
    this.#host.write(() => this.#sql.unregisterWorker.run(id));
  };

  readonly listWorkers = async (): Promise<WorkerRecord[]> => {
    const now = this.#host.now();
    return (this.#sql.listWorkers.all() as Row[]).map((row) => readWorker(row, now));
  };

  readonly claimAndLoadRuns = async (claim: WorkClaim): Promise<ClaimedRun[]> => {
    checkLeaseMs('(claim)', claim.leaseMs);
    return this.#host.write(() => {
      const now = this.#host.now();
      const ids = this.#sql.runCandidates
        .all({ graphs: JSON.stringify(claim.graphs), now, limit: Math.max(0, claim.limit) })
        .map((row) => String((row as Row).id));
      return ids.map((runId): ClaimedRun => {
        const lease = this.#host.lease(runId, claim, now);
        try {
          const run = this.#host.loaded(runId)!;
          return { lease, run, inbox: this.#inboxOf(runId) };
        } catch (error) {
          return { lease, error };
        }
      });
    });
  };

  readonly commitAll = async (runId: string, commits: readonly Commit[]): Promise<void> => {
    if (commits.length === 0) return;
    checkGroup(runId, commits);
    this.#host.write(() => {
      for (const commit of commits) this.#host.commit(runId, commit);
    });
    for (const commit of commits) this.told(commit.schedule);
  };

  readonly commitRuns = async (groups: readonly RunGroup[]): Promise<boolean[]> => {
    for (const { runId, commits } of groups) {
      if (commits.length === 0 || !isPlainGroup(commits)) {
        throw new WaymarkError(
          'STORE_CONFLICT',
          `commitRuns takes plain groups of commits only; run "${runId}"'s is not one`,
          { retryable: false, details: { runId } },
        );
      }
      checkGroup(runId, commits);
    }
    // Each group holds or not on its own: one that is refused leaves the others written.
    const written: boolean[] = [];
    for (const { runId, commits } of groups) {
      try {
        await this.commitAll(runId, commits);
        written.push(true);
      } catch (error) {
        const code = (error as { code?: unknown }).code;
        if (code !== 'STORE_CONFLICT' && code !== 'LEASE_LOST' && code !== 'RUN_NOT_FOUND')
          throw error;
        written.push(false);
      }
    }
    return written;
  };

  readonly createRuns = async (
    runs: readonly NewRun[],
    options: { readonly wake?: boolean } = {},
  ): Promise<void> => {
    if (runs.length === 0) return;
    const given = new Set<string>();
    for (const run of runs) {
      if (given.has(run.id)) throw exists(run.id, runs.length);
      given.add(run.id);
    }
    this.#host.write(() => {
      for (const run of runs) {
        try {
          this.#host.create(run);
        } catch (error) {
          if ((error as { code?: unknown }).code === 'RUN_EXISTS')
            throw exists(run.id, runs.length);
          throw error;
        }
      }
      if (options.wake === true) this.#sql.arrive.run(runs[0]!.id, null, runs[0]!.createdAt);
    });
    if (options.wake === true) this.#signals.tell('runs');
  };

  readonly claimTasks = async (claim: WorkClaim): Promise<ClaimedTask[]> => {
    checkLeaseMs('(claim)', claim.leaseMs);
    return this.#host.write(() => {
      const now = this.#host.now();
      const rows = this.#sql.claimTasks.all({
        graphs: JSON.stringify(claim.graphs),
        now,
        limit: Math.max(0, claim.limit),
        owner: claim.owner,
        expiresAt: now + Math.ceil(claim.leaseMs),
      }) as Row[];
      return rows.map(readTask);
    });
  };

  readonly renewTasks = async (
    tasks: readonly ClaimedTask[],
    leaseMs: number,
  ): Promise<{ renewed: ClaimedTask[]; lost: string[] }> => {
    if (tasks.length === 0) return { renewed: [], lost: [] };
    checkLeaseMs(tasks[0]!.runId, leaseMs);
    return this.#host.write(() => {
      const expiresAt = this.#host.now() + Math.ceil(leaseMs);
      const renewed: ClaimedTask[] = [];
      const lost: string[] = [];
      for (const t of tasks) {
        const { changes } = this.#sql.renewTask.run(
          expiresAt,
          t.runId,
          t.activation,
          t.epoch,
          t.owner,
        );
        if (changes === 1) renewed.push({ ...t, expiresAt });
        else lost.push(`${t.runId}/${t.activation}`);
      }
      return { renewed, lost };
    });
  };

  readonly finishTasks = async (
    finished: readonly FinishedTask[],
    options: { readonly wake?: boolean } = {},
  ): Promise<boolean[]> => {
    if (finished.length === 0) return [];
    const held = this.#host.write(() =>
      finished.map(({ task: t, attempt, at }) => {
        const { changes } = this.#sql.finishTask.run(t.runId, t.activation, t.epoch, t.owner);
        if (changes === 1) this.#sql.arrive.run(t.runId, attempt, at);
        return changes === 1;
      }),
    );
    if ((options.wake ?? true) && held.includes(true)) this.#signals.tell('runs');
    return held;
  };

  readonly releaseTask = async (t: ClaimedTask): Promise<void> => {
    const { changes } = this.#host.write(() =>
      this.#sql.releaseTask.run(t.runId, t.activation, t.epoch, t.owner),
    );
    if (changes === 1) this.#signals.tell('tasks');
  };

  readonly listTasks = async (runId: string): Promise<ClaimedTask[]> =>
    (this.#sql.listTasks.all(runId) as Row[]).map(readTask);

  readonly wake = async (runId: string, at: number): Promise<void> => {
    this.#host.write(() => this.#sql.wake.run(at, runId));
    this.#signals.tell('runs');
  };

  /** A wake-up written inside the caller's write transaction (an answer's); tell after it commits. */
  wakeWithin(runId: string, at: number): void {
    this.#sql.wake.run(at, runId);
  }

  /** Tells this process's idle workers of a wake-up written with {@link wakeWithin}. */
  toldOfWake(): void {
    this.#signals.tell('runs');
  }

  readonly inbox = async (runId: string): Promise<InboxRecord[]> => this.#inboxOf(runId);

  readonly consume = async (runId: string, lease: Lease, ids: readonly number[]): Promise<void> => {
    if (ids.length === 0) return;
    this.#host.write(() => {
      for (const id of ids)
        this.#sql.consumeHeld.run({ runId, id, epoch: lease.epoch, owner: lease.owner });
    });
  };

  readonly foldFailed = async (lease: Lease, retryInMs: number): Promise<number> =>
    this.#host.write(() => {
      const row = this.#sql.foldFailed.get({
        runId: lease.runId,
        epoch: lease.epoch,
        owner: lease.owner,
        until: this.#host.now() + Math.ceil(retryInMs),
      }) as Row | undefined;
      return row === undefined ? 0 : Number(row.fold_failures);
    });

  readonly failRun = async (
    lease: Lease,
    failure: { readonly error: string; readonly at: number },
  ): Promise<boolean> =>
    this.#host.write(() => {
      const { changes } = this.#sql.failHead.run({
        runId: lease.runId,
        epoch: lease.epoch,
        owner: lease.owner,
        error: failure.error,
      });
      if (changes === 0) return false;
      this.#sql.releaseFailed.run(lease.runId);
      for (const drop of [this.#sql.dropTasks, this.#sql.dropInbox, this.#sql.dropTimers])
        drop.run(lease.runId);
      return true;
    });

  /** Another process's writes are never told: a worker on SQLite polls. */
  readonly listening = false;

  readonly notifiedOf = (kind: WorkKind): number => this.#signals.notifiedOf(kind);

  readonly waitForWork: WorkQueue['waitForWork'] = (ms, signal, since, kind) =>
    this.#signals.wait(ms, signal, since, kind);

  close(): void {
    this.#signals.wakeAll();
  }

  #inboxOf(runId: string): InboxRecord[] {
    return (this.#sql.inbox.all(runId) as Row[]).map((row) => readInbox(row, runId));
  }
}

function exists(runId: string, count: number): WaymarkError {
  return new WaymarkError(
    'RUN_EXISTS',
    count === 1
      ? `run "${runId}" exists already`
      : `run "${runId}" exists already (or is given twice): none of the ${count} runs was recorded`,
    { retryable: false, details: { runId } },
  );
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
