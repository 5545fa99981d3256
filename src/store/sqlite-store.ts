import { resolve } from 'node:path';
import type Database from 'better-sqlite3';
import { storeCorrupt } from '../error/store-corrupt.js';
import { WaymarkError } from '../error/waymark-error.js';
import { leaseLost, runOwned, takeLease } from './internal/leases.js';
import {
  checkHistory,
  type Row,
  readEvent,
  readLease,
  readMemo,
  readRun,
  readSnapshot,
  readTimer,
} from './internal/rows.js';
import {
  conflict,
  maxSqliteSeq,
  runNotFound,
  tooLong,
  unavailable,
} from './internal/sqlite-errors.js';
import { SqliteItems } from './internal/sqlite-items.js';
import { SqliteLedger } from './internal/sqlite-ledger.js';
import { SqliteLimits } from './internal/sqlite-limits.js';
import { openStoreFile } from './internal/sqlite-open.js';
import { type SqliteStoreOptions, sqliteOptions } from './internal/sqlite-options.js';
import { SqliteQueue } from './internal/sqlite-queue.js';
import { SqliteRates } from './internal/sqlite-rates.js';
import { SqliteRetention } from './internal/sqlite-retention.js';
import { SqliteSchedules } from './internal/sqlite-schedules.js';
import { SqliteSignals } from './internal/sqlite-signals.js';
import { leaseLostMessage, prefixed, refusedMessage, statements } from './internal/sqlite-sql.js';
import type { LimitStore } from './limits.js';
import type { RateStore } from './rates.js';
import type { DeletedRun, DeleteOptions } from './run-removal.js';
import type { SignalStore } from './signal-store.js';
import type {
  Commit,
  Lease,
  LeaseClaim,
  LoadedRun,
  MemoRecord,
  NewRun,
  RunFilter,
  RunRecord,
  RunUsage,
  Store,
  StoredEvent,
  TimerRecord,
  WorkClaim,
} from './store.js';
import { storeFormatVersion } from './store.js';
import type { WorkQueue } from './work-queue.js';

export type { SqliteStoreOptions } from './internal/sqlite-options.js';

/** The SQLite settings in force on a store's connection, as SQLite reports them. */
export interface SqliteSettings {
  readonly journalMode: string;
  readonly synchronous: 'off' | 'normal' | 'full' | 'extra';
}

/** Where a store without a `path` option keeps its file, under `process.cwd()`. */
export const defaultSqlitePath = '.waymark/waymark.db';

const synchronousNames = ['off', 'normal', 'full', 'extra'] as const;

/** How many run numbers a store keeps in memory, so a step does not look its run up. */
const cachedRunNumbers = 1024;

type Statements = { readonly [K in keyof typeof statements]: Database.Statement };

/**
 * The embedded store: one SQLite file (WAL mode) through better-sqlite3. Runs survive the
 * process; several processes may share the file, and a commit against a stale sequence number
 * fails with STORE_CONFLICT whichever connection made it. It serves workers too: `waymark
 * worker` processes on one machine share the file's work queue (internal/sqlite-queue.ts).
 * Import it from `waymark/sqlite`.
 *
 * @example
 * import { SqliteStore } from 'waymark/sqlite';
 * const store = new SqliteStore(); // .waymark/waymark.db under the current directory
 * const other = new SqliteStore('var/runs.db'); // or { path: 'var/runs.db', synchronous: 'full' }
 * const first = await run(g, input, { store });
 */
export class SqliteStore implements Store, WorkQueue, LimitStore, SignalStore, RateStore {
  /** The absolute path of the database file. */
  readonly path: string;
  readonly #db: Database.Database;
  readonly #sql: Statements;
  readonly #queue: SqliteQueue;
  readonly #items: SqliteItems;
  readonly #limits: SqliteLimits;
  readonly #schedules: SqliteSchedules;
  readonly #ledger: SqliteLedger;
  readonly #signals: SqliteSignals;
  readonly #retention: SqliteRetention;
  readonly #rates: SqliteRates;
  /** Run numbers by run id, newest last: a number never changes once the run exists. */
  readonly #numbers = new Map<string, number>();
  readonly #now: () => number;

  /**
   * Opens (creating if needed) the file and brings its schema up to date.
   *
   * @throws WaymarkError `STORE_CORRUPT` if the file is not a waymark database (not SQLite, or
   *   another application's tables); `STORE_VERSION_UNSUPPORTED` if its schema is newer than
   *   this waymark; `STORE_UNAVAILABLE` if it cannot be opened (a directory, no permission, the
   *   driver's native module missing); `OPTIONS_INVALID` for an argument that is neither a path
   *   nor an options object, an empty or non-string `path`, or an unknown `synchronous` value.
   * @example
   * new SqliteStore('var/runs.db'); // the same as new SqliteStore({ path: 'var/runs.db' })
   */
  constructor(pathOrOptions: string | SqliteStoreOptions = {}) {
    const { synchronous, busyTimeoutMs, ...options } = sqliteOptions(pathOrOptions);
    this.#now = options.now ?? Date.now;
    const path = options.path ?? defaultSqlitePath;
    this.path = path === ':memory:' ? path : resolve(path);
    const create = options.create ?? true;
    const { db, prepared } = openStoreFile(
      this.path,
      { create, busyTimeoutMs, synchronous },
      (opened) =>
        Object.fromEntries(
          Object.entries(statements).map(([name, sql]) => [name, opened.prepare(sql)]),
        ) as unknown as Statements,
    );
    this.#sql = prepared;
    this.#db = db;
    this.#items = new SqliteItems(db, this.path, () => this.#now());
    this.#limits = new SqliteLimits(db);
    this.#schedules = new SqliteSchedules(db, this.path, () => this.#now());
    this.#queue = new SqliteQueue(db, {
      now: () => this.#now(),
      write: (fn) => this.#write(fn),
      loaded: (runId) => this.#loaded(runId),
      lease: (runId, claim, now) => this.#claim(runId, claim, now),
      create: (run) => this.#create(run),
      commit: (runId, commit) => this.#commitIn(runId, commit),
    });
    this.#signals = new SqliteSignals(db, {
      write: (fn) => this.#write(fn),
      read: (fn) => this.#read(fn),
      queue: this.#queue,
      now: () => this.#now(),
    });
    this.#retention = new SqliteRetention(db, {
      now: () => this.#now(),
      run: (runId) => this.#run(runId),
      number: (runId) => this.#number(runId),
    });
    this.#rates = new SqliteRates(db, {
      write: (fn) => this.#write(fn),
      read: (fn) => this.#read(fn),
    });
    this.#ledger = new SqliteLedger(this.#sql, this.#queue, {
      write: (fn) => this.#write(fn),
      read: (fn) => this.#read(fn),
      existing: (runId) => this.#existing(runId),
    });
  }

  /**
   * The journal mode and synchronous level SQLite reports for this connection.
   *
   * @example
   * new SqliteStore({ synchronous: 'full' }).settings(); // { journalMode: 'wal', synchronous: 'full' }
   */
  settings(): SqliteSettings {
    const level = this.#db.pragma('synchronous', { simple: true }) as number;
    return {
      journalMode: String(this.#db.pragma('journal_mode', { simple: true })),
      synchronous: synchronousNames[level] ?? 'off',
    };
  }

  async createRun(run: NewRun): Promise<void> {
    this.#write(() => this.#create(run));
  }

  #create(run: NewRun): void {
    {
      const inserted = this.#sql.insertRun.get({
        id: run.id,
        graph: run.graph,
        graphHash: run.graphHash,
        graphVersion: run.graphVersion,
        stateVersion: run.stateVersion,
        format: storeFormatVersion,
        createdAt: run.createdAt,
        labels: run.labels ?? null,
      }) as { num: number } | undefined;
      if (inserted === undefined) {
        throw new WaymarkError('RUN_EXISTS', `run "${run.id}" exists already`, {
          retryable: false,
        });
      }
      // Admitted before its head is written: a queued run is recorded waiting.
      const status = this.#limits.admit(run);
      this.#sql.insertHead.run({ num: inserted.num, createdAt: run.createdAt, status });
      this.#sql.insertSnapshot.run(run.id, 0, run.snapshot);
      this.#retention.noteSources(run.id, run.sources);
    }
  }

  /** Deletes the run and all it owns in one write transaction (internal/sqlite-retention.ts). */
  async deleteRun(runId: string, options?: DeleteOptions): Promise<DeletedRun> {
    const deleted = this.#write(() => this.#retention.delete(runId, options));
    this.#numbers.delete(runId);
    return deleted;
  }

  async commit(runId: string, commit: Commit): Promise<void> {
    const { snapshot, waits, timers, schedule } = commit;
    const release = commit.release === true && (commit.epoch ?? null) !== null;
    // Most steps carry no snapshot, wait, timer or task: one INSERT, its own implicit transaction.
    if (snapshot === null && !waits && !timers && !schedule && !release)
      this.#commitIn(runId, commit);
    else this.#write(() => this.#commitIn(runId, commit));
    this.#queue.told(schedule);
  }

  /** One commit's statements, fenced by seq and epoch; in the caller's transaction, if any. */
  #commitIn(runId: string, commit: Commit): void {
    if (commit.seq > maxSqliteSeq) throw tooLong(runId, commit.seq);
    const num = this.#number(runId);
    const { seq, at, event, trace, status, error, snapshot, waits, timers } = commit;
    const epoch = commit.epoch ?? null;
    try {
      this.#sql.insertCommit.run(num, seq, at, event, trace, status, error, epoch);
      if (snapshot !== null) {
        this.#sql.insertSnapshot.run(runId, seq, snapshot);
        this.#sql.pruneSnapshots.run(runId, seq);
      }
      for (const wait of waits?.open ?? [])
        this.#sql.insertWait.run({ ...wait, closedAt: wait.closedAt ?? null });
      for (const requestId of waits?.close ?? []) this.#sql.closeWait.run(at, runId, requestId);
      for (const id of timers?.clear ?? []) this.#sql.clearTimer.run(runId, id);
      for (const timer of timers?.set ?? []) this.#sql.setTimer.run(runId, timer.id, timer.at);
      if (commit.release === true && epoch !== null) this.#sql.releaseLeaseAt.run(num, epoch);
      this.#queue.scheduleIn(runId, commit.schedule);
    } catch (failure) {
      throw this.#refused(runId, seq, epoch, failure);
    }
  }

  async acquire(runId: string, claim: LeaseClaim): Promise<Lease> {
    return this.#write(() => {
      // Looked up again: the run may have been deleted and made anew under the same id.
      this.#numbers.delete(runId);
      const num = this.#number(runId);
      const row = readLease(prefixed(this.#sql.getLease.get(num) as Row | undefined), runId);
      const now = this.#now();
      const taken = takeLease(runId, row, claim, now);
      if (!taken.ok) throw runOwned(runId, row!, now);
      const { owner, host, pid, epoch, expiresAt } = taken.row;
      this.#sql.putLease.run(num, owner, host, pid, epoch, expiresAt);
      return { runId, owner, epoch, expiresAt };
    });
  }

  /** A worker's claim of the run: epoch + 1, whoever held it (its lease has expired). */
  #claim(runId: string, claim: WorkClaim, now: number): Lease {
    this.#numbers.delete(runId);
    const num = this.#number(runId);
    const row = readLease(prefixed(this.#sql.getLease.get(num) as Row | undefined), runId);
    const epoch = (row?.epoch ?? 0) + 1;
    const expiresAt = now + Math.ceil(claim.leaseMs);
    this.#sql.putLease.run(
      num,
      claim.owner,
      claim.host ?? null,
      claim.pid ?? null,
      epoch,
      expiresAt,
    );
    return { runId, owner: claim.owner, epoch, expiresAt };
  }

  async renew(
    leases: readonly Lease[],
    leaseMs: number,
  ): Promise<{ renewed: Lease[]; lost: string[] }> {
    return this.#write(() => {
      const expiresAt = this.#now() + leaseMs;
      const renewed: Lease[] = [];
      const lost: string[] = [];
      for (const lease of leases) {
        const { changes } = this.#sql.renewLease.run(
          expiresAt,
          lease.runId,
          lease.epoch,
          lease.owner,
        );
        if (changes === 1) renewed.push({ ...lease, expiresAt });
        else lost.push(lease.runId);
      }
      return { renewed, lost };
    });
  }

  async release(lease: Lease): Promise<void> {
    this.#write(() => this.#sql.releaseLease.run(lease.runId, lease.epoch, lease.owner));
  }

  async listTimers(runId: string): Promise<TimerRecord[]> {
    return this.#read(() => {
      const rows = this.#sql.listTimers.all(runId) as Row[];
      if (rows.length === 0) this.#existing(runId);
      return rows.map(readTimer);
    });
  }

  async nextTimerAt(after: number): Promise<number | undefined> {
    const row = this.#sql.nextTimer.get(after) as { at: number | null };
    return row.at ?? undefined;
  }

  async dueTimers(at: number, limit?: number): Promise<TimerRecord[]> {
    const rows = this.#sql.dueTimers.all(
      at,
      limit === undefined ? -1 : Math.max(0, limit),
    ) as Row[];
    return rows.map(readTimer);
  }

  async snapshotAt(runId: string, seq: number): Promise<{ seq: number; data: string } | undefined> {
    return this.#read(() => {
      const row = this.#sql.snapshotAt.get(runId, seq) as Row | undefined;
      return row === undefined ? undefined : readSnapshot(row, runId);
    });
  }

  async loadRun(runId: string): Promise<LoadedRun | undefined> {
    return this.#read(() => this.#loaded(runId));
  }

  #loaded(runId: string): LoadedRun | undefined {
    {
      const run = this.#run(runId);
      if (run === undefined) return undefined;
      if (run.format > storeFormatVersion) {
        throw new WaymarkError(
          'STORE_VERSION_UNSUPPORTED',
          `run "${runId}" cannot be loaded: it was written in store format ${run.format}, newer than this waymark reads (${storeFormatVersion})`,
          { retryable: false, details: { runId, table: 'runs', column: 'format' } },
        );
      }
      const row = this.#sql.latestSnapshot.get(runId) as Row | undefined;
      if (row === undefined)
        throw storeCorrupt(runId, 'it has no snapshot', { table: 'snapshots' });
      const snapshot = readSnapshot(row, runId);
      if (snapshot.seq > run.seq) {
        throw storeCorrupt(
          runId,
          `its snapshot at seq ${snapshot.seq} is past the run's seq ${run.seq}`,
          { table: 'snapshots', key: snapshot.seq },
        );
      }
      const events = this.#eventsAfter(run, this.#number(runId), snapshot.seq);
      return { run, snapshot, events };
    }
  }

  async getRun(runId: string): Promise<RunRecord | undefined> {
    return this.#run(runId);
  }

  async listRuns(filter: RunFilter = {}): Promise<RunRecord[]> {
    const now = this.#now();
    const rows = this.#sql.listRuns.all({
      statuses: filter.status === undefined ? null : JSON.stringify([filter.status].flat()),
      graph: filter.graph ?? null,
      labels: filter.labels === undefined ? null : JSON.stringify(filter.labels),
      beforeAt: filter.before?.createdAt ?? null,
      beforeId: filter.before?.id ?? null,
      since: filter.since ?? null,
      until: filter.until ?? null,
      // SQLite reads a negative LIMIT as "no limit".
      limit: filter.limit === undefined ? -1 : Math.max(0, Math.trunc(filter.limit)),
    }) as Row[];
    // A row that cannot be read is left out rather than failing the whole listing: every other
    // run stays usable, and loading the bad one still says STORE_CORRUPT.
    return rows.flatMap((row) => {
      try {
        return [readRun(row, String(row.id), now)];
      } catch (error) {
        if ((error as { code?: unknown }).code === 'STORE_CORRUPT') return [];
        throw error;
      }
    });
  }

  async events(runId: string, afterSeq = 0): Promise<StoredEvent[]> {
    return this.#read(() =>
      this.#eventsAfter(this.#existing(runId), this.#number(runId), afterSeq),
    );
  }

  async usage(runId: string): Promise<RunUsage> {
    return this.#read(() => {
      const num = this.#number(runId);
      return { ...(this.#sql.usage.get({ id: runId, num }) as RunUsage) };
    });
  }

  // Effects and waits, kept by run: internal/sqlite-ledger.ts.
  readonly recordEffect: Store['recordEffect'] = async (e) => this.#ledger.recordEffect(e);
  readonly getEffect: Store['getEffect'] = async (id, key) => this.#ledger.getEffect(id, key);
  readonly listEffects: Store['listEffects'] = async (id) => this.#ledger.listEffects(id);
  readonly openWait: Store['openWait'] = async (wait) => this.#ledger.openWait(wait);
  readonly answerWait: Store['answerWait'] = async (...a) => this.#ledger.answerWait(...a);
  readonly listWaits: Store['listWaits'] = async (id, o) => this.#ledger.listWaits(id, o);

  // Signals for event waits: internal/sqlite-signals.ts.
  readonly sendSignal: SignalStore['sendSignal'] = (s) => this.#signals.sendSignal(s);
  readonly matchSignal: SignalStore['matchSignal'] = (w, at) => this.#signals.matchSignal(w, at);
  readonly redeliverSignal: SignalStore['redeliverSignal'] = (id, at) =>
    this.#signals.redeliverSignal(id, at);
  readonly listSignals: SignalStore['listSignals'] = (f) => this.#signals.listSignals(f);
  readonly expireSignals: SignalStore['expireSignals'] = (at) => this.#signals.expireSignals(at);

  async putMemo(memo: MemoRecord): Promise<void> {
    this.#sql.insertMemo.run({ ...memo });
  }

  async findMemo(
    graph: string,
    node: string,
    nodeVersion: number,
    inputHash: string,
  ): Promise<MemoRecord | undefined> {
    const row = this.#sql.findMemo.get(graph, node, nodeVersion, inputHash) as Row | undefined;
    return row === undefined ? undefined : readMemo(row);
  }

  readonly clearMemos: Store['clearMemos'] = async (graph, node) =>
    this.#sql.clearMemos.run(graph, node ?? null, node ?? null).changes;

  // The memory items kept across runs: internal/sqlite-items.ts.
  readonly putItem: Store['putItem'] = (item) => this.#items.putItem(item);
  readonly getItem: Store['getItem'] = (ns, key) => this.#items.getItem(ns, key);
  readonly searchItems: Store['searchItems'] = (search) => this.#items.searchItems(search);
  readonly deleteItem: Store['deleteItem'] = (ns, key) => this.#items.deleteItem(ns, key);
  readonly listItemNamespaces: Store['listItemNamespaces'] = (p) =>
    this.#items.listItemNamespaces(p);

  // Concurrency limits: internal/sqlite-limits.ts.
  readonly runLimit: LimitStore['runLimit'] = async (id) =>
    this.#read(() => this.#limits.runLimit(id));
  readonly listQueued: LimitStore['listQueued'] = async (f) =>
    this.#read(() => this.#limits.listQueued(f));
  readonly activeCount: LimitStore['activeCount'] = async (g, k) =>
    this.#read(() => this.#limits.activeCount(g, k));
  // Rate limits on shared resources: internal/sqlite-rates.ts.
  readonly admitRate: RateStore['admitRate'] = (request) => this.#rates.admitRate(request);
  readonly settleRate: RateStore['settleRate'] = (r, id, n) => this.#rates.settleRate(r, id, n);
  readonly blockRate: RateStore['blockRate'] = (r, until) => this.#rates.blockRate(r, until);
  readonly rateWindow: RateStore['rateWindow'] = (r, at) => this.#rates.rateWindow(r, at);
  // Schedules: internal/sqlite-schedules.ts.
  readonly putSchedule: Store['putSchedule'] = (s) => this.#schedules.putSchedule(s);
  readonly getSchedule: Store['getSchedule'] = (id) => this.#schedules.getSchedule(id);
  readonly listSchedules: Store['listSchedules'] = (g) => this.#schedules.listSchedules(g);
  readonly changeSchedule: Store['changeSchedule'] = (id, revision, state) =>
    this.#schedules.changeSchedule(id, revision, state);
  readonly removeSchedule: Store['removeSchedule'] = (id) => this.#schedules.removeSchedule(id);
  readonly dueSchedules: Store['dueSchedules'] = (g, at, limit) =>
    this.#schedules.dueSchedules(g, at, limit);
  readonly nextScheduleAt: Store['nextScheduleAt'] = (g, after) =>
    this.#schedules.nextScheduleAt(g, after);

  // The work queue: internal/sqlite-queue.ts.
  readonly registerWorker: WorkQueue['registerWorker'] = (w) => this.#queue.registerWorker(w);
  readonly unregisterWorker: WorkQueue['unregisterWorker'] = (id) =>
    this.#queue.unregisterWorker(id);
  readonly listWorkers: WorkQueue['listWorkers'] = () => this.#queue.listWorkers();
  readonly claimAndLoadRuns: WorkQueue['claimAndLoadRuns'] = (c) => this.#queue.claimAndLoadRuns(c);
  readonly commitAll: WorkQueue['commitAll'] = (id, commits) => this.#queue.commitAll(id, commits);
  readonly commitRuns: WorkQueue['commitRuns'] = (groups) => this.#queue.commitRuns(groups);
  readonly createRuns: WorkQueue['createRuns'] = (runs, o) => this.#queue.createRuns(runs, o);
  readonly claimTasks: WorkQueue['claimTasks'] = (claim) => this.#queue.claimTasks(claim);
  readonly renewTasks: WorkQueue['renewTasks'] = (tasks, ms) => this.#queue.renewTasks(tasks, ms);
  readonly finishTasks: WorkQueue['finishTasks'] = (done, o) => this.#queue.finishTasks(done, o);
  readonly releaseTask: WorkQueue['releaseTask'] = (task) => this.#queue.releaseTask(task);
  readonly foldFailed: WorkQueue['foldFailed'] = (lease, ms) => this.#queue.foldFailed(lease, ms);
  readonly failRun: WorkQueue['failRun'] = (lease, failure) => this.#queue.failRun(lease, failure);
  readonly listTasks: WorkQueue['listTasks'] = (runId) => this.#queue.listTasks(runId);
  readonly wake: WorkQueue['wake'] = (runId, at) => this.#queue.wake(runId, at);
  readonly inbox: WorkQueue['inbox'] = (runId) => this.#queue.inbox(runId);
  readonly consume: WorkQueue['consume'] = (id, lease, ids) => this.#queue.consume(id, lease, ids);
  /** SQLite has no NOTIFY: a worker polls for what other processes wrote. */
  readonly listening = false;
  readonly notifiedOf: WorkQueue['notifiedOf'] = (kind) => this.#queue.notifiedOf(kind);
  readonly waitForWork: WorkQueue['waitForWork'] = (ms, signal, since, kind) =>
    this.#queue.waitForWork(ms, signal, since, kind);

  async close(): Promise<void> {
    this.#queue.close();
    if (this.#db.open) this.#db.close();
  }

  /** Runs `fn` in a write transaction (BEGIN IMMEDIATE); an exception rolls everything back. */
  #write<T>(fn: () => T): T {
    return this.#transaction(this.#sql.beginWrite, fn);
  }

  /** Runs `fn` in a read transaction: every statement sees the same committed state. */
  #read<T>(fn: () => T): T {
    return this.#transaction(this.#sql.begin, fn);
  }

  #transaction<T>(begin: Database.Statement, fn: () => T): T {
    try {
      begin.run();
    } catch (error) {
      throw unavailable(this.path, error);
    }
    try {
      const result = fn();
      this.#sql.commit.run();
      return result;
    } catch (error) {
      // SQLite may have rolled back already (SQLITE_FULL, SQLITE_IOERR); then there is nothing to undo.
      if (this.#db.inTransaction) this.#sql.rollback.run();
      throw unavailable(this.path, error);
    }
  }

  #run(runId: string): RunRecord | undefined {
    const row = this.#sql.getRun.get(runId) as Row | undefined;
    return row === undefined ? undefined : readRun(row, runId, this.#now());
  }

  #existing(runId: string): RunRecord {
    const run = this.#run(runId);
    if (run === undefined) throw runNotFound(runId);
    return run;
  }

  /** The run's number, which keys its events; looked up once per run and remembered. */
  #number(runId: string): number {
    const known = this.#numbers.get(runId);
    if (known !== undefined) return known;
    const row = this.#sql.runNumber.get(runId) as Row | undefined;
    if (row === undefined) throw runNotFound(runId);
    const num = row.num;
    if (typeof num !== 'number' || !Number.isSafeInteger(num) || num < 1 || num >= 2 ** 31) {
      throw storeCorrupt(runId, `its runs row holds ${JSON.stringify(num)} in column num`, {
        table: 'runs',
        column: 'num',
      });
    }
    if (this.#numbers.size >= cachedRunNumbers) {
      this.#numbers.delete(this.#numbers.keys().next().value as string);
    }
    this.#numbers.set(runId, num);
    return num;
  }

  /**
   * Why a commit wrote nothing, as the contract names it: the trigger refuses a stale or
   * out-of-order seq and a damaged head, and only damage leaves a row where the event goes.
   */
  #refused(runId: string, seq: number, epoch: number | null, error: unknown): unknown {
    // A number remembered for a run since deleted (and perhaps made anew) is looked up again.
    this.#numbers.delete(runId);
    const code = (error as { code?: unknown }).code;
    const message = (error as Error).message;
    if (code === 'SQLITE_CONSTRAINT_TRIGGER' && message === leaseLostMessage) {
      const row = readLease(
        prefixed(this.#sql.getLease.get(this.#number(runId)) as Row | undefined),
        runId,
      );
      return leaseLost(runId, epoch!, row);
    }
    const refused = code === 'SQLITE_CONSTRAINT_TRIGGER' && message === refusedMessage;
    if (!refused && code !== 'SQLITE_CONSTRAINT_PRIMARYKEY') return unavailable(this.path, error);
    // The trigger accepted seq - 1 as the head; then an event or snapshot row was in the way.
    if (!refused) {
      return storeCorrupt(runId, `it already has rows at seq ${seq}, past its seq ${seq - 1}`, {
        key: seq,
      });
    }
    // Reading the run explains the refusal, and fails by itself if the run is gone or damaged.
    return conflict(runId, this.#existing(runId).seq, seq);
  }

  /** The events after `afterSeq`, checked to run without a gap up to the run's own seq. */
  #eventsAfter(run: RunRecord, num: number, afterSeq: number): StoredEvent[] {
    // Never below 0, so the key range cannot reach back into the previous run's rows.
    const after = Math.min(Math.max(0, Math.floor(afterSeq)) || 0, maxSqliteSeq);
    const rows = this.#sql.eventsAfter.all({ num, after }) as Row[];
    const events = rows.map((row) => readEvent(row, run.id));
    // The head is itself the row at the run's seq, so checkHistory's "ends before it" never fires.
    checkHistory(run, events, after);
    return events;
  }
}
