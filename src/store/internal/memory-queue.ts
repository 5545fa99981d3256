// The memory store's work queue (work-queue.ts): tasks, each run's inbox, the worker registry
// and the news of work, all in this process. The rules are PostgreSQL's (pg-queue-sql.ts), so
// that a worker tested on memory behaves as it does on a database.

import type {
  ClaimedTask,
  Commit,
  FinishedTask,
  InboxRecord,
  Lease,
  TaskRecord,
  WorkClaim,
  WorkerRecord,
} from '../store.js';
import type { WorkKind, WorkQueue } from '../work-queue.js';
import { checkLeaseMs } from './leases.js';
import { LocalSignals } from './local-signals.js';

interface TaskRow {
  task: TaskRecord;
  owner: string | null;
  epoch: number;
  expiresAt: number;
  createdAt: number;
  /** Insertion order, to break ties of `createdAt`. */
  order: number;
}

/** Who holds a run now, as the queue's fences read it. */
export type RunLeaseOf = (runId: string) => { epoch: number; owner: string } | undefined;

export class MemoryQueue {
  readonly #now: () => number;
  readonly #tasks = new Map<string, TaskRow>();
  readonly #inbox: InboxRecord[] = [];
  readonly #workers = new Map<string, Omit<WorkerRecord, 'live'>>();
  readonly #signals = new LocalSignals();
  #nextInbox = 1;
  #nextTask = 1;

  constructor(now: () => number) {
    this.#now = now;
  }

  /** What a commit schedules, cancels and consumes: written with the commit. */
  schedule(runId: string, schedule: Commit['schedule']): void {
    if (schedule === undefined) return;
    for (const task of schedule.tasks ?? []) {
      const key = keyOf(runId, task.activation);
      const prior = this.#tasks.get(key);
      // A retry replaces its earlier attempt's row, and fences a worker still running that one.
      this.#tasks.set(key, {
        task: { ...task, runId },
        owner: null,
        expiresAt: 0,
        epoch: prior === undefined ? 0 : prior.epoch + 1,
        createdAt: prior?.createdAt ?? this.#now(),
        order: prior?.order ?? this.#nextTask++,
      });
    }
    for (const activation of schedule.cancel ?? []) this.#tasks.delete(keyOf(runId, activation));
    this.#remove(runId, schedule.consumed ?? []);
    if ((schedule.tasks?.length ?? 0) > 0) this.#signals.tell('tasks');
  }

  /** Whether the run has an inbox item, or a task queued. */
  hasInbox(runId: string): boolean {
    return this.#inbox.some((i) => i.runId === runId);
  }

  hasTasks(runId: string): boolean {
    for (const row of this.#tasks.values()) if (row.task.runId === runId) return true;
    return false;
  }

  /** Puts a wake-up (or an attempt) in a run's inbox; a wake-up tells idle workers. */
  arrive(runId: string, attempt: string | null, at: number, wake: boolean): void {
    this.#inbox.push({ id: this.#nextInbox++, runId, attempt, at });
    if (wake) this.#signals.tell('runs');
  }

  inbox(runId: string): InboxRecord[] {
    return this.#inbox.filter((i) => i.runId === runId);
  }

  consume(runId: string, lease: Lease, held: RunLeaseOf, ids: readonly number[]): void {
    const now = held(runId);
    if (now?.epoch === lease.epoch && now.owner === lease.owner) this.#remove(runId, ids);
  }

  claimTasks(claim: WorkClaim): ClaimedTask[] {
    checkLeaseMs('(claim)', claim.leaseMs);
    const now = this.#now();
    const graphs = new Set(claim.graphs.map((g) => `${g.name}\n${g.hash}`));
    const due = [...this.#tasks.values()]
      .filter(
        (row) =>
          graphs.has(`${row.task.graph}\n${row.task.graphHash}`) &&
          row.expiresAt <= now &&
          (row.task.notBefore ?? 0) <= now,
      )
      .sort(
        (a, b) =>
          (a.task.notBefore ?? 0) - (b.task.notBefore ?? 0) ||
          a.createdAt - b.createdAt ||
          a.order - b.order,
      )
      .slice(0, Math.max(0, claim.limit));
    for (const row of due) {
      row.owner = claim.owner;
      row.epoch += 1;
      row.expiresAt = now + Math.ceil(claim.leaseMs);
    }
    return due.map(claimed);
  }

  renewTasks(
    tasks: readonly ClaimedTask[],
    leaseMs: number,
  ): { renewed: ClaimedTask[]; lost: string[] } {
    if (tasks.length > 0) checkLeaseMs(tasks[0]!.runId, leaseMs);
    const renewed: ClaimedTask[] = [];
    const lost: string[] = [];
    const expiresAt = this.#now() + Math.ceil(leaseMs);
    for (const task of tasks) {
      const key = keyOf(task.runId, task.activation);
      const row = this.#held(task);
      if (row === undefined) lost.push(key);
      else {
        row.expiresAt = expiresAt;
        renewed.push({ ...task, expiresAt });
      }
    }
    return { renewed, lost };
  }

  finishTasks(finished: readonly FinishedTask[], wake: boolean): boolean[] {
    const held = finished.map((f) => {
      if (this.#held(f.task) === undefined) return false;
      this.#tasks.delete(keyOf(f.task.runId, f.task.activation));
      this.arrive(f.task.runId, f.attempt, f.at, false);
      return true;
    });
    if (wake && held.includes(true)) this.#signals.tell('runs');
    return held;
  }

  releaseTask(task: ClaimedTask): void {
    const row = this.#held(task);
    if (row === undefined) return;
    row.owner = null;
    row.expiresAt = 0;
    this.#signals.tell('tasks');
  }

  listTasks(runId: string): ClaimedTask[] {
    return [...this.#tasks.values()]
      .filter((row) => row.task.runId === runId)
      .sort((a, b) => a.createdAt - b.createdAt || (a.task.activation < b.task.activation ? -1 : 1))
      .map(claimed);
  }

  registerWorker(worker: Parameters<WorkQueue['registerWorker']>[0]): void {
    checkLeaseMs(worker.id, worker.leaseMs);
    const expiresAt = this.#now() + Math.ceil(worker.leaseMs);
    const known = this.#workers.get(worker.id);
    this.#workers.set(worker.id, {
      id: worker.id,
      host: known?.host ?? worker.host,
      pid: known?.pid ?? worker.pid,
      graphs: worker.graphs.map((g) => ({ name: g.name, hash: g.hash })),
      expiresAt,
    });
  }

  unregisterWorker(id: string): void {
    this.#workers.delete(id);
  }

  listWorkers(): WorkerRecord[] {
    const now = this.#now();
    return [...this.#workers.values()]
      .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
      .map((w) => ({ ...w, live: w.expiresAt > now }));
  }

  notifiedOf(kind: WorkKind): number {
    return this.#signals.notifiedOf(kind);
  }

  waitForWork(ms: number, signal: AbortSignal, since?: number, kind?: WorkKind): Promise<void> {
    return this.#signals.wait(ms, signal, since, kind);
  }

  /** Drops a run's queued tasks and inbox: it failed, and nothing would ever fold them. */
  /** Whether a worker holds one of the run's tasks under a lease that has not expired. */
  hasLiveTask(runId: string): boolean {
    const now = this.#now();
    for (const row of this.#tasks.values())
      if (row.task.runId === runId && row.owner !== null && row.expiresAt > now) return true;
    return false;
  }

  drop(runId: string): void {
    for (const [key, row] of this.#tasks) if (row.task.runId === runId) this.#tasks.delete(key);
    this.#remove(
      runId,
      this.inbox(runId).map((i) => i.id),
    );
  }

  close(): void {
    this.#signals.wakeAll();
  }

  /** The task's row while its lease (epoch and owner) is still this one. */
  #held(task: ClaimedTask): TaskRow | undefined {
    const row = this.#tasks.get(keyOf(task.runId, task.activation));
    return row !== undefined && row.epoch === task.epoch && row.owner === task.owner
      ? row
      : undefined;
  }

  #remove(runId: string, ids: readonly number[]): void {
    if (ids.length === 0) return;
    const gone = new Set(ids);
    for (let i = this.#inbox.length - 1; i >= 0; i--) {
      const item = this.#inbox[i]!;
      if (item.runId === runId && gone.has(item.id)) this.#inbox.splice(i, 1);
    }
  }
}

function keyOf(runId: string, activation: string): string {
  return `${runId}/${activation}`;
}

function claimed(row: TaskRow): ClaimedTask {
  return { ...row.task, owner: row.owner ?? '', epoch: row.epoch, expiresAt: row.expiresAt };
}
