import { PgConnection } from './internal/pg/connection.js';
import * as signals from './internal/pg/event-signals.js';
import * as items from './internal/pg/items.js';
import * as limits from './internal/pg/limits.js';
import { createAdmitted } from './internal/pg/limits.js';
import * as own from './internal/pg/ownership.js';
import * as rates from './internal/pg/rates.js';
import * as records from './internal/pg/records.js';
import * as retention from './internal/pg/retention.js';
import * as log from './internal/pg/run-log.js';
import * as schedules from './internal/pg/schedules.js';
import { PgSignals } from './internal/pg/signals.js';
import * as queue from './internal/pg/work-queue.js';
import type { PostgresStoreOptions } from './internal/pg-params.js';
import { statementDeadlineOf } from './internal/pg-pool.js';
import type { LimitStore } from './limits.js';
import type { RateStore } from './rates.js';
import type { DeletedRun, DeleteOptions } from './run-removal.js';
import type { NewSchedule, ScheduleRecord, ScheduleState } from './schedule-store.js';
import type { SignalStore } from './signal-store.js';
import type {
  ClaimedTask,
  Commit,
  CommitFollower,
  EffectRecord,
  FinishedTask,
  InboxRecord,
  ItemRecord,
  ItemSearch,
  Lease,
  LeaseClaim,
  LoadedRun,
  MemoRecord,
  NewItem,
  NewRun,
  RunCommits,
  RunFilter,
  RunGroup,
  RunRecord,
  RunUsage,
  Store,
  StoredEvent,
  TimerRecord,
  WaitRecord,
  WorkClaim,
  WorkerRecord,
} from './store.js';
import type { ClaimedRun, WorkKind, WorkQueue } from './work-queue.js';

export { defaultPostgresSchema } from './internal/pg/connection.js';
export type { PostgresStoreOptions } from './internal/pg-params.js';

/**
 * The store on PostgreSQL, through node-postgres: many processes on many machines share one
 * database. Each step's commit is one statement, fenced by the run's seq and lease epoch;
 * leases expire by the database's clock. The store creates and migrates its schema on its first
 * call (or in {@link PostgresStore.open}). Import it from `waymark/postgres`.
 *
 * Each concern of the contract is a module under internal/pg/ (run log, ownership, work queue,
 * records, signals); this class only hands each call to its module.
 *
 * @example
 * import { PostgresStore } from 'waymark/postgres';
 * const store = await PostgresStore.open('postgres://localhost/app'); // schema "waymark"
 * const first = await run(g, input, { store });
 * await store.close();
 */
export class PostgresStore
  implements Store, WorkQueue, RunCommits, LimitStore, SignalStore, RateStore
{
  /** The PostgreSQL schema that holds the store's tables. */
  readonly schema: string;
  readonly #db: PgConnection;
  readonly #signals: PgSignals;

  /**
   * Checks the options and makes (or takes) the pool; connects on the first call.
   *
   * @throws WaymarkError `OPTIONS_INVALID` for an argument that is neither a connection string
   *   nor an options object, a schema name that is not a plain lower-case identifier, a
   *   `poolSize` or `connectTimeoutMs` that is not a whole number > 0, or a `pool` given with
   *   a `connectionString` or `poolSize`.
   * @example
   * new PostgresStore({ connectionString: process.env.DATABASE_URL, schema: 'runs', poolSize: 20 });
   */
  constructor(connectionOrOptions: string | PostgresStoreOptions = {}) {
    this.#db = new PgConnection(connectionOrOptions);
    this.schema = this.#db.schema;
    this.#signals = new PgSignals(this.#db);
  }

  /**
   * A store whose schema is ready: connects, and creates or migrates the schema, now rather
   * than on the first call.
   *
   * @throws WaymarkError `STORE_UNAVAILABLE` if the database cannot be reached (retryable),
   *   `STORE_VERSION_UNSUPPORTED` if its schema is newer than this waymark.
   * @example
   * const store = await PostgresStore.open({ connectionString: 'postgres://localhost/app' });
   */
  static async open(connectionOrOptions?: string | PostgresStoreOptions): Promise<PostgresStore> {
    const store = new PostgresStore(connectionOrOptions);
    try {
      await store.#db.ready();
    } catch (error) {
      await store.close();
      throw error;
    }
    return store;
  }

  // The run log.
  createRun(run: NewRun): Promise<void> {
    return createAdmitted(this.#db, [run], (db) => log.createRun(db, run));
  }
  commit(runId: string, commit: Commit): Promise<void> {
    return log.commit(this.#db, runId, commit);
  }
  /**
   * Commits consecutive steps of one run in one statement, all or none: fenced as one commit is,
   * by the first one's seq and by their epoch (the same for all).
   * @throws WaymarkError as `commit` does, with nothing written.
   */
  commitAll(runId: string, commits: readonly Commit[]): Promise<void> {
    return log.commitAll(this.#db, runId, commits);
  }
  /**
   * Deletes the run and every row it owns in one transaction (internal/pg/retention.ts).
   * @throws WaymarkError `RUN_NOT_FOUND`, `RUN_LIVE`, `RUN_WAITING`, `RUN_REFERENCED`.
   */
  deleteRun(runId: string, options?: DeleteOptions): Promise<DeletedRun> {
    return retention.deleteRun(this.#db, runId, options);
  }
  loadRun(runId: string): Promise<LoadedRun | undefined> {
    return log.loadRun(this.#db, runId);
  }
  getRun(runId: string): Promise<RunRecord | undefined> {
    return log.getRun(this.#db, runId);
  }
  snapshotAt(runId: string, seq: number): Promise<{ seq: number; data: string } | undefined> {
    return log.snapshotAt(this.#db, runId, seq);
  }
  listRuns(filter?: RunFilter): Promise<RunRecord[]> {
    return log.listRuns(this.#db, filter);
  }
  events(runId: string, afterSeq?: number): Promise<StoredEvent[]> {
    return log.events(this.#db, runId, afterSeq);
  }
  usage(runId: string): Promise<RunUsage> {
    return log.usage(this.#db, runId);
  }

  // Ownership and timers.
  acquire(runId: string, claim: LeaseClaim): Promise<Lease> {
    return own.acquire(this.#db, runId, claim);
  }
  renew(leases: readonly Lease[], leaseMs: number): Promise<{ renewed: Lease[]; lost: string[] }> {
    return own.renew(this.#db, leases, leaseMs);
  }
  release(lease: Lease): Promise<void> {
    return own.release(this.#db, lease);
  }
  listTimers(runId: string): Promise<TimerRecord[]> {
    return own.listTimers(this.#db, runId);
  }
  dueTimers(at: number, limit?: number): Promise<TimerRecord[]> {
    return own.dueTimers(this.#db, at, limit);
  }
  nextTimerAt(after: number): Promise<number | undefined> {
    return own.nextTimerAt(this.#db, after);
  }

  // Effects, waits, memos.
  recordEffect(effect: EffectRecord): Promise<EffectRecord> {
    return records.recordEffect(this.#db, effect);
  }
  getEffect(runId: string, key: string): Promise<EffectRecord | undefined> {
    return records.getEffect(this.#db, runId, key);
  }
  listEffects(runId: string): Promise<EffectRecord[]> {
    return records.listEffects(this.#db, runId);
  }
  openWait(wait: WaitRecord): Promise<void> {
    return records.openWait(this.#db, wait);
  }
  answerWait(
    runId: string,
    requestId: string,
    answer: string,
    by: string,
    at: number,
  ): Promise<WaitRecord> {
    return records.answerWait(this.#db, runId, requestId, answer, by, at);
  }
  listWaits(runId: string, options?: { readonly open?: boolean }): Promise<WaitRecord[]> {
    return records.listWaits(this.#db, runId, options);
  }
  putMemo(memo: MemoRecord): Promise<void> {
    return records.putMemo(this.#db, memo);
  }
  findMemo(
    graph: string,
    node: string,
    nodeVersion: number,
    inputHash: string,
  ): Promise<MemoRecord | undefined> {
    return records.findMemo(this.#db, graph, node, nodeVersion, inputHash);
  }

  clearMemos(graph: string, node?: string): Promise<number> {
    return records.clearMemos(this.#db, graph, node);
  }

  // Signals for event waits.
  readonly sendSignal: SignalStore['sendSignal'] = (s) => signals.sendSignal(this.#db, s);
  readonly matchSignal: SignalStore['matchSignal'] = (w, at) =>
    signals.matchSignal(this.#db, w, at);
  readonly redeliverSignal: SignalStore['redeliverSignal'] = (id, at) =>
    signals.redeliverSignal(this.#db, id, at);
  readonly listSignals: SignalStore['listSignals'] = (f) => signals.listSignals(this.#db, f);
  readonly expireSignals: SignalStore['expireSignals'] = (at) =>
    signals.expireSignals(this.#db, at);

  // The memory items kept across runs.
  putItem(item: NewItem): Promise<ItemRecord> {
    return items.putItem(this.#db, item);
  }
  getItem(namespace: readonly string[], key: string): Promise<ItemRecord | undefined> {
    return items.getItem(this.#db, namespace, key);
  }
  searchItems(search: ItemSearch): Promise<ItemRecord[]> {
    return items.searchItems(this.#db, search);
  }
  deleteItem(namespace: readonly string[], key: string): Promise<boolean> {
    return items.deleteItem(this.#db, namespace, key);
  }
  listItemNamespaces(prefix: readonly string[]): Promise<string[][]> {
    return items.listItemNamespaces(this.#db, prefix);
  }

  // Schedules (internal/pg/schedules.ts).
  putSchedule(schedule: NewSchedule): Promise<ScheduleRecord> {
    return schedules.putSchedule(this.#db, schedule);
  }
  getSchedule(id: string): Promise<ScheduleRecord | undefined> {
    return schedules.getSchedule(this.#db, id);
  }
  listSchedules(graphs?: readonly string[]): Promise<ScheduleRecord[]> {
    return schedules.listSchedules(this.#db, graphs);
  }
  changeSchedule(
    id: string,
    revision: number,
    state: ScheduleState,
  ): Promise<ScheduleRecord | undefined> {
    return schedules.changeSchedule(this.#db, id, revision, state);
  }
  removeSchedule(id: string): Promise<boolean> {
    return schedules.removeSchedule(this.#db, id);
  }
  dueSchedules(graphs: readonly string[], at: number, limit?: number): Promise<ScheduleRecord[]> {
    return schedules.dueSchedules(this.#db, graphs, at, limit);
  }
  nextScheduleAt(graphs: readonly string[], after: number): Promise<number | undefined> {
    return schedules.nextScheduleAt(this.#db, graphs, after);
  }

  // The work queue.
  registerWorker(worker: Parameters<WorkQueue['registerWorker']>[0]): Promise<void> {
    return queue.registerWorker(this.#db, worker);
  }
  unregisterWorker(id: string): Promise<void> {
    return queue.unregisterWorker(this.#db, id);
  }
  listWorkers(): Promise<WorkerRecord[]> {
    return queue.listWorkers(this.#db);
  }
  claimAndLoadRuns(claim: WorkClaim): Promise<ClaimedRun[]> {
    return queue.claimAndLoadRuns(this.#db, claim);
  }
  claimTasks(claim: WorkClaim): Promise<ClaimedTask[]> {
    return queue.claimTasks(this.#db, claim);
  }
  renewTasks(
    tasks: readonly ClaimedTask[],
    leaseMs: number,
  ): Promise<{ renewed: ClaimedTask[]; lost: string[] }> {
    return queue.renewTasks(this.#db, tasks, leaseMs);
  }
  finishTasks(
    finished: readonly FinishedTask[],
    options?: { readonly wake?: boolean },
  ): Promise<boolean[]> {
    return queue.finishTasks(this.#db, finished, options);
  }
  releaseTask(task: ClaimedTask): Promise<void> {
    return queue.releaseTask(this.#db, task);
  }

  foldFailed(lease: Lease, retryInMs: number): Promise<number> {
    return queue.foldFailed(this.#db, lease, retryInMs);
  }

  failRun(
    lease: Lease,
    failure: { readonly error: string; readonly at: number },
  ): Promise<boolean> {
    return queue.failRun(this.#db, lease, failure);
  }
  commitRuns(groups: readonly RunGroup[]): Promise<boolean[]> {
    return queue.commitRuns(this.#db, groups);
  }
  // Concurrency limits: internal/pg/limits.ts.
  readonly runLimit: LimitStore['runLimit'] = (id) => limits.runLimit(this.#db, id);
  readonly listQueued: LimitStore['listQueued'] = (f) => limits.listQueued(this.#db, f);
  readonly activeCount: LimitStore['activeCount'] = (g, k) => limits.activeCount(this.#db, g, k);

  // Rate limits on shared resources: internal/pg/rates.ts.
  readonly admitRate: RateStore['admitRate'] = (request) => rates.admitRate(this.#db, request);
  readonly settleRate: RateStore['settleRate'] = (r, id, n) => rates.settleRate(this.#db, r, id, n);
  readonly blockRate: RateStore['blockRate'] = (r, until) => rates.blockRate(this.#db, r, until);
  readonly rateWindow: RateStore['rateWindow'] = (r, at) => rates.rateWindow(this.#db, r, at);

  createRuns(runs: readonly NewRun[], options?: { readonly wake?: boolean }): Promise<void> {
    return createAdmitted(this.#db, runs, (db) => queue.createRuns(db, runs, options));
  }
  wake(runId: string, at: number): Promise<void> {
    return queue.wake(this.#db, runId, at);
  }
  inbox(runId: string): Promise<InboxRecord[]> {
    return queue.inbox(this.#db, runId);
  }
  consume(runId: string, lease: Lease, ids: readonly number[]): Promise<void> {
    return queue.consume(this.#db, runId, lease, ids);
  }
  listTasks(runId: string): Promise<ClaimedTask[]> {
    return queue.listTasks(this.#db, runId);
  }

  // News of work and of commits.
  get listening(): boolean {
    return this.#signals.listening;
  }
  notifiedOf(kind: WorkKind): number {
    return this.#signals.notifiedOf(kind);
  }
  waitForWork(ms: number, signal: AbortSignal, since?: number, kind?: WorkKind): Promise<void> {
    return this.#signals.waitForWork(ms, signal, since, kind);
  }
  followCommits(runId: string): Promise<CommitFollower> {
    return this.#signals.followCommits(runId);
  }

  /**
   * The longest one of the store's statements can run before it fails (its pool's larger
   * deadline), or undefined for a given pool without deadlines. A `Worker` checks its lease
   * against it.
   */
  get statementDeadlineMs(): number | undefined {
    return statementDeadlineOf(this.#db.pool);
  }

  /** Ends the pool the store created (a pool it was given is left to its owner). */
  async close(): Promise<void> {
    if (this.#db.closed) return;
    this.#db.shut();
    await this.#signals.close();
    await this.#db.end();
  }
}
