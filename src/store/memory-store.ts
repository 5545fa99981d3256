import { WaymarkError } from '../error/waymark-error.js';
import {
  checkLeaseMs,
  type LeaseRow,
  leaseLost,
  leaseView,
  runOwned,
  takeLease,
} from './internal/leases.js';
import { MemoryItems } from './internal/memory-items.js';
import { MemoryLedger } from './internal/memory-ledger.js';
import { MemoryLimits } from './internal/memory-limits.js';
import { MemoryMemos } from './internal/memory-memos.js';
import { MemoryQueue } from './internal/memory-queue.js';
import { MemoryRates } from './internal/memory-rates.js';
import { checkGroup, listed, pickLease } from './internal/memory-rows.js';
import { MemorySchedules } from './internal/memory-schedules.js';
import { MemorySignals } from './internal/memory-signals.js';
import type { LimitStore } from './limits.js';
import type { RateStore } from './rates.js';
import { type DeletedRun, type DeleteOptions, noSuchRun, removalRefusal } from './run-removal.js';
import type { SignalStore } from './signal-store.js';
import type {
  ClaimedTask,
  Commit,
  EffectRecord,
  FinishedTask,
  InboxRecord,
  Lease,
  LeaseClaim,
  LoadedRun,
  NewRun,
  RunFilter,
  RunGroup,
  RunRecord,
  RunUsage,
  Store,
  StoredEvent,
  StoredStatus,
  TimerRecord,
  WaitRecord,
  WorkClaim,
  WorkerRecord,
} from './store.js';
import { isPlainGroup, storeFormatVersion } from './store.js';
import type { ClaimedRun, WorkKind, WorkQueue } from './work-queue.js';

interface RunRows {
  run: Omit<RunRecord, 'lease'>;
  events: StoredEvent[];
  snapshots: { seq: number; data: string }[];
  effects: Map<string, EffectRecord>;
  waits: Map<string, WaitRecord>;
  timers: Map<string, TimerRecord>;
  lease: LeaseRow | undefined;
  /** Failed folds of the run (WorkQueue.foldFailed). */
  foldFailures?: number;
  /** Runs it reads recorded outputs from (NewRun.sources). */
  sources: readonly string[];
}

/** Options of a {@link MemoryStore}. */
export interface MemoryStoreOptions {
  /** The store's clock, which alone decides when a lease or a memory item expires. Default `Date.now`. */
  readonly now?: () => number;
}

/**
 * A store that keeps everything in this process: for tests, and for runs that need resume
 * within one process only. Same contract as the SQLite and PostgreSQL stores, work queue
 * included: workers in this process can share it (a worker tested without a database).
 *
 * @example
 * const store = new MemoryStore();
 * const first = await run(g, input, { store });
 * const again = await resume(store, g, first.runId);
 */
export class MemoryStore implements Store, WorkQueue, LimitStore, SignalStore, RateStore {
  readonly #runs = new Map<string, RunRows>();
  readonly #memos = new MemoryMemos();
  readonly #now: () => number;
  readonly #queue: MemoryQueue;
  readonly #items: MemoryItems;
  readonly #limits = new MemoryLimits();
  readonly #schedules: MemorySchedules;

  constructor(options: MemoryStoreOptions = {}) {
    this.#now = options.now ?? Date.now;
    this.#queue = new MemoryQueue(this.#now);
    this.#items = new MemoryItems(this.#now);
    this.#schedules = new MemorySchedules(this.#now);
    this.#signals = new MemorySignals({
      wait: (runId, requestId) => this.#runs.get(runId)?.waits.get(requestId),
      answer: (runId, requestId, answer, by, at) => {
        const waits = this.#rows(runId).waits;
        waits.set(requestId, { ...waits.get(requestId)!, answer, answeredBy: by, answeredAt: at });
        this.#queue.arrive(runId, null, at, true);
      },
      now: this.#now,
    });
  }

  // Signals for event waits: internal/memory-signals.ts.
  readonly #signals: MemorySignals;
  readonly sendSignal: SignalStore['sendSignal'] = (s) => this.#signals.sendSignal(s);
  readonly matchSignal: SignalStore['matchSignal'] = (w, at) => this.#signals.matchSignal(w, at);
  readonly redeliverSignal: SignalStore['redeliverSignal'] = (id, at) =>
    this.#signals.redeliverSignal(id, at);
  readonly listSignals: SignalStore['listSignals'] = (f) => this.#signals.listSignals(f);
  readonly expireSignals: SignalStore['expireSignals'] = (at) => this.#signals.expireSignals(at);

  async createRun(run: NewRun): Promise<void> {
    if (this.#runs.has(run.id))
      throw new WaymarkError('RUN_EXISTS', `run "${run.id}" exists already`, { retryable: false });
    this.#create(run);
  }

  #create(run: NewRun): void {
    const record: RunRows['run'] = {
      id: run.id,
      graph: run.graph,
      graphHash: run.graphHash,
      graphVersion: run.graphVersion,
      stateVersion: run.stateVersion,
      format: storeFormatVersion,
      status:
        run.limit === undefined
          ? run.status
          : this.#limits.admit(run.id, run.graph, run.limit, run.status, run.createdAt),
      seq: 0,
      createdAt: run.createdAt,
      updatedAt: run.createdAt,
      error: null,
      labels: run.labels ?? null,
    };
    this.#runs.set(run.id, {
      run: record,
      events: [],
      snapshots: [{ seq: 0, data: run.snapshot }],
      effects: new Map(),
      waits: new Map(),
      timers: new Map(),
      lease: undefined,
      sources: run.sources ?? [],
    });
  }

  async commit(runId: string, commit: Commit): Promise<void> {
    const rows = this.#rows(runId);
    this.#fence(runId, rows, commit);
    this.#apply(runId, rows, commit);
  }

  /** Refuses a commit under an epoch that is no longer the run's, or not at its next seq. */
  #fence(runId: string, rows: RunRows, commit: Commit): void {
    const epoch = commit.epoch ?? null;
    if (epoch !== null && epoch !== rows.lease?.epoch) throw leaseLost(runId, epoch, rows.lease);
    if (commit.seq !== rows.run.seq + 1) {
      throw new WaymarkError(
        'STORE_CONFLICT',
        `run "${runId}" is at sequence ${rows.run.seq}; a commit for ${commit.seq} is stale or out of order`,
        { details: { runId, current: rows.run.seq, attempted: commit.seq } },
      );
    }
  }

  #apply(runId: string, rows: RunRows, commit: Commit): void {
    const epoch = commit.epoch ?? null;
    rows.events.push({ seq: commit.seq, at: commit.at, event: commit.event, trace: commit.trace });
    if (commit.snapshot !== null) {
      // The first and the newest snapshots are the only ones ever read: keep just those.
      rows.snapshots = [rows.snapshots[0]!, { seq: commit.seq, data: commit.snapshot }];
    }
    const was = rows.run.status;
    rows.run = {
      ...rows.run,
      seq: commit.seq,
      status: commit.status,
      error: commit.error,
      updatedAt: commit.at,
    };
    if (was !== commit.status) this.#follow(runId, commit.status, commit.at);
    for (const wait of commit.waits?.open ?? []) {
      if (!rows.waits.has(wait.requestId))
        rows.waits.set(wait.requestId, { ...wait, closedAt: wait.closedAt ?? null });
    }
    for (const requestId of commit.waits?.close ?? []) {
      const wait = rows.waits.get(requestId);
      if (wait !== undefined && wait.answer === null && !wait.closedAt)
        rows.waits.set(requestId, { ...wait, closedAt: commit.at });
    }
    if (commit.release && epoch !== null && rows.lease !== undefined)
      rows.lease = { ...rows.lease, expiresAt: 0 };
    for (const id of commit.timers?.clear ?? []) rows.timers.delete(id);
    for (const timer of commit.timers?.set ?? []) rows.timers.set(timer.id, timer);
    this.#queue.schedule(runId, commit.schedule);
  }

  async loadRun(runId: string): Promise<LoadedRun | undefined> {
    const rows = this.#runs.get(runId);
    if (rows === undefined) return undefined;
    const snapshot = rows.snapshots.at(-1)!;
    return {
      run: this.#record(rows),
      snapshot,
      events: rows.events.filter((e) => e.seq > snapshot.seq),
    };
  }

  async acquire(runId: string, claim: LeaseClaim): Promise<Lease> {
    const rows = this.#rows(runId);
    const taken = takeLease(runId, rows.lease, claim, this.#now());
    if (!taken.ok) throw runOwned(runId, rows.lease!, this.#now());
    rows.lease = taken.row;
    return { runId, owner: claim.owner, epoch: taken.row.epoch, expiresAt: taken.row.expiresAt };
  }

  async renew(
    leases: readonly Lease[],
    leaseMs: number,
  ): Promise<{ renewed: Lease[]; lost: string[] }> {
    const renewed: Lease[] = [];
    const lost: string[] = [];
    const expiresAt = this.#now() + leaseMs;
    for (const lease of leases) {
      const rows = this.#runs.get(lease.runId);
      const row = rows?.lease;
      // A lease given up stays given up: a renewal racing the last commit cannot take it back.
      if (
        row === undefined ||
        row.epoch !== lease.epoch ||
        row.owner !== lease.owner ||
        row.expiresAt === 0
      ) {
        lost.push(lease.runId);
        continue;
      }
      rows!.lease = { ...row, expiresAt };
      renewed.push({ ...lease, expiresAt });
    }
    return { renewed, lost };
  }

  async release(lease: Lease): Promise<void> {
    const rows = this.#runs.get(lease.runId);
    const row = rows?.lease;
    if (row !== undefined && row.epoch === lease.epoch && row.owner === lease.owner)
      rows!.lease = { ...row, expiresAt: 0 };
  }

  async listTimers(runId: string): Promise<TimerRecord[]> {
    return [...this.#rows(runId).timers.values()].sort((a, b) => a.at - b.at);
  }

  async nextTimerAt(after: number): Promise<number | undefined> {
    let next: number | undefined;
    for (const rows of this.#runs.values())
      for (const t of rows.timers.values()) if (t.at > after && !(t.at >= next!)) next = t.at;
    return next;
  }

  async dueTimers(at: number, limit?: number): Promise<TimerRecord[]> {
    const due = [...this.#runs.values()]
      .flatMap((rows) => [...rows.timers.values()])
      .filter((t) => t.at <= at)
      .sort((a, b) => a.at - b.at || (a.runId < b.runId ? -1 : 1));
    return limit === undefined ? due : due.slice(0, Math.max(0, limit));
  }

  async snapshotAt(runId: string, seq: number): Promise<{ seq: number; data: string } | undefined> {
    return this.#runs.get(runId)?.snapshots.findLast((s) => s.seq <= seq);
  }

  async getRun(runId: string): Promise<RunRecord | undefined> {
    const rows = this.#runs.get(runId);
    return rows === undefined ? undefined : this.#record(rows);
  }

  async listRuns(filter: RunFilter = {}): Promise<RunRecord[]> {
    return listed(
      [...this.#runs.values()].map((r) => this.#record(r)),
      filter,
    );
  }

  async events(runId: string, afterSeq = 0): Promise<StoredEvent[]> {
    const after = afterSeq || 0; // NaN reads as 0, as in every store
    return this.#rows(runId).events.filter((e) => e.seq > after);
  }

  async usage(runId: string): Promise<RunUsage> {
    const rows = this.#rows(runId);
    const bytes = (text: string | null) => (text === null ? 0 : Buffer.byteLength(text));
    return {
      events: rows.events.length,
      eventBytes: rows.events.reduce((n, e) => n + bytes(e.event) + bytes(e.trace), 0),
      snapshots: rows.snapshots.length,
      snapshotBytes: rows.snapshots.reduce((n, s) => n + bytes(s.data), 0),
    };
  }

  // Effects and waits: internal/memory-ledger.ts.
  readonly #ledger = new MemoryLedger({
    rows: (runId) => this.#rows(runId),
    wake: (runId, at) => this.#queue.arrive(runId, null, at, true),
  });
  // Methods, not fields: a subclass may wrap them (examples/changelog-post's failing store).
  recordEffect(effect: EffectRecord): Promise<EffectRecord> {
    return this.#ledger.recordEffect(effect);
  }
  getEffect(runId: string, key: string): Promise<EffectRecord | undefined> {
    return this.#ledger.getEffect(runId, key);
  }
  listEffects(runId: string): Promise<EffectRecord[]> {
    return this.#ledger.listEffects(runId);
  }
  openWait(wait: WaitRecord): Promise<void> {
    return this.#ledger.openWait(wait);
  }
  answerWait(...answer: Parameters<Store['answerWait']>): Promise<WaitRecord> {
    return this.#ledger.answerWait(...answer);
  }
  listWaits(runId: string, options?: { readonly open?: boolean }): Promise<WaitRecord[]> {
    return this.#ledger.listWaits(runId, options);
  }

  // Memos of node outputs, for reuse across runs: internal/memory-memos.ts.
  readonly putMemo: Store['putMemo'] = async (memo) => this.#memos.put(memo);
  readonly findMemo: Store['findMemo'] = async (...key) => this.#memos.find(...key);
  readonly clearMemos: Store['clearMemos'] = async (graph, node) => this.#memos.clear(graph, node);

  // The memory items kept across runs: internal/memory-items.ts.
  readonly putItem: Store['putItem'] = (item) => this.#items.putItem(item);
  readonly getItem: Store['getItem'] = (ns, key) => this.#items.getItem(ns, key);
  readonly searchItems: Store['searchItems'] = (search) => this.#items.searchItems(search);
  readonly deleteItem: Store['deleteItem'] = (ns, key) => this.#items.deleteItem(ns, key);
  readonly listItemNamespaces: Store['listItemNamespaces'] = (p) =>
    this.#items.listItemNamespaces(p);

  // Schedules: internal/memory-schedules.ts.
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

  // Rate limits on shared resources: internal/memory-rates.ts.
  readonly #rates = new MemoryRates();
  readonly admitRate: RateStore['admitRate'] = (request) => this.#rates.admitRate(request);
  readonly settleRate: RateStore['settleRate'] = (r, id, n) => this.#rates.settleRate(r, id, n);
  readonly blockRate: RateStore['blockRate'] = (r, until) => this.#rates.blockRate(r, until);
  readonly rateWindow: RateStore['rateWindow'] = (r, at) => this.#rates.rateWindow(r, at);

  async registerWorker(worker: Parameters<WorkQueue['registerWorker']>[0]): Promise<void> {
    this.#queue.registerWorker(worker);
  }

  async unregisterWorker(id: string): Promise<void> {
    this.#queue.unregisterWorker(id);
  }

  async listWorkers(): Promise<WorkerRecord[]> {
    return this.#queue.listWorkers();
  }

  async claimAndLoadRuns(claim: WorkClaim): Promise<ClaimedRun[]> {
    checkLeaseMs('(claim)', claim.leaseMs);
    const now = this.#now();
    const graphs = new Set(claim.graphs.map((g) => `${g.name}\n${g.hash}`));
    const candidates = [...this.#runs.values()]
      .filter(({ run, lease, timers }) => {
        if (!graphs.has(`${run.graph}\n${run.graphHash}`)) return false;
        if (run.status !== 'running' && run.status !== 'waiting') return false;
        if (lease !== undefined && lease.expiresAt > now) return false;
        return (
          (run.seq === 0 && run.status === 'running') ||
          this.#queue.hasInbox(run.id) ||
          [...timers.values()].some((t) => t.at <= now) ||
          (run.status === 'running' && !this.#queue.hasTasks(run.id))
        );
      })
      .sort((a, b) => a.run.createdAt - b.run.createdAt || (a.run.id < b.run.id ? -1 : 1))
      .slice(0, Math.max(0, claim.limit));
    // Every lease is taken before the first await: a claim side by side sees them all taken.
    for (const rows of candidates) {
      rows.lease = {
        owner: claim.owner,
        host: claim.host ?? null,
        pid: claim.pid ?? null,
        epoch: (rows.lease?.epoch ?? 0) + 1,
        expiresAt: now + Math.ceil(claim.leaseMs),
      };
    }
    const claimed: ClaimedRun[] = [];
    for (const { run, lease } of candidates) {
      const held = { runId: run.id, owner: claim.owner, ...pickLease(lease!) };
      const loaded = (await this.loadRun(run.id))!;
      claimed.push({ lease: held, run: loaded, inbox: this.#queue.inbox(run.id) });
    }
    return claimed;
  }

  async foldFailed(lease: Lease, retryInMs: number): Promise<number> {
    const rows = this.#heldLive(lease);
    if (rows === undefined) return 0;
    rows.foldFailures = (rows.foldFailures ?? 0) + 1;
    rows.lease = { ...rows.lease!, expiresAt: this.#now() + Math.ceil(retryInMs) };
    return rows.foldFailures;
  }

  async failRun(
    lease: Lease,
    failure: { readonly error: string; readonly at: number },
  ): Promise<boolean> {
    const rows = this.#heldLive(lease);
    if (rows === undefined) return false;
    rows.run = { ...rows.run, status: 'failed', error: failure.error, updatedAt: failure.at };
    this.#follow(lease.runId, 'failed', failure.at);
    rows.lease = { ...rows.lease!, expiresAt: 0 };
    rows.timers.clear();
    this.#queue.drop(lease.runId);
    return true;
  }

  /** The rows of a live run whose lease is still `lease`'s (its expiry aside). */
  #heldLive(lease: Lease): RunRows | undefined {
    const rows = this.#runs.get(lease.runId);
    const row = rows?.lease;
    if (row === undefined || row.epoch !== lease.epoch || row.owner !== lease.owner)
      return undefined;
    return rows!.run.status === 'running' || rows!.run.status === 'waiting' ? rows : undefined;
  }

  async commitAll(runId: string, commits: readonly Commit[]): Promise<void> {
    if (commits.length === 0) return;
    const rows = this.#rows(runId);
    checkGroup(runId, commits);
    this.#fence(runId, rows, commits[0]!);
    for (const commit of commits) this.#apply(runId, rows, commit);
  }

  async commitRuns(groups: readonly RunGroup[]): Promise<boolean[]> {
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
    return groups.map(({ runId, commits }) => {
      const rows = this.#runs.get(runId);
      if (rows === undefined) return false;
      try {
        this.#fence(runId, rows, commits[0]!);
      } catch {
        return false;
      }
      for (const commit of commits) this.#apply(runId, rows, commit);
      return true;
    });
  }

  async createRuns(
    runs: readonly NewRun[],
    options: { readonly wake?: boolean } = {},
  ): Promise<void> {
    const ids = new Set<string>();
    for (const run of runs) {
      if (this.#runs.has(run.id) || ids.has(run.id)) {
        throw new WaymarkError(
          'RUN_EXISTS',
          runs.length === 1
            ? `run "${run.id}" exists already`
            : `run "${run.id}" exists already (or is given twice): none of the ${runs.length} runs was recorded`,
          { retryable: false, details: { runId: run.id } },
        );
      }
      ids.add(run.id);
    }
    for (const run of runs) this.#create(run);
    if (options.wake === true && runs[0] !== undefined)
      this.#queue.arrive(runs[0].id, null, runs[0].createdAt, true);
  }

  async wake(runId: string, at: number): Promise<void> {
    if (this.#runs.has(runId)) this.#queue.arrive(runId, null, at, true);
  }

  async inbox(runId: string): Promise<InboxRecord[]> {
    return this.#queue.inbox(runId);
  }

  async consume(runId: string, lease: Lease, ids: readonly number[]): Promise<void> {
    this.#queue.consume(runId, lease, (id) => this.#runs.get(id)?.lease, ids);
  }

  async claimTasks(claim: WorkClaim): Promise<ClaimedTask[]> {
    return this.#queue.claimTasks(claim);
  }

  async renewTasks(
    tasks: readonly ClaimedTask[],
    leaseMs: number,
  ): Promise<{ renewed: ClaimedTask[]; lost: string[] }> {
    return this.#queue.renewTasks(tasks, leaseMs);
  }

  async finishTasks(
    finished: readonly FinishedTask[],
    options: { readonly wake?: boolean } = {},
  ): Promise<boolean[]> {
    return this.#queue.finishTasks(finished, options.wake ?? true);
  }

  async releaseTask(task: ClaimedTask): Promise<void> {
    this.#queue.releaseTask(task);
  }

  async listTasks(runId: string): Promise<ClaimedTask[]> {
    return this.#queue.listTasks(runId);
  }

  /** Every write of this store is told to its waiters as it happens. */
  readonly listening = true;

  notifiedOf(kind: WorkKind): number {
    return this.#queue.notifiedOf(kind);
  }

  waitForWork(ms: number, signal: AbortSignal, since?: number, kind?: WorkKind): Promise<void> {
    return this.#queue.waitForWork(ms, signal, since, kind);
  }

  /**
   * Deletes the run and what it owns, all at once: its rows (history, snapshots, effects, waits,
   * timers, lease, sources), its memos, its tasks and inbox, and its limit's row.
   * @throws WaymarkError `RUN_NOT_FOUND`, `RUN_LIVE`, `RUN_WAITING`, `RUN_REFERENCED`.
   */
  async deleteRun(runId: string, options?: DeleteOptions): Promise<DeletedRun> {
    const rows = this.#runs.get(runId);
    if (rows === undefined) throw noSuchRun(runId);
    const { status, graph, createdAt } = rows.run;
    const referrers = [...this.#runs.values()]
      .filter((r) => r.sources.includes(runId) && ['running', 'waiting'].includes(r.run.status))
      .map((r) => r.run.id);
    const leaseLive = rows.lease !== undefined && rows.lease.expiresAt > this.#now();
    const taskLive = this.#queue.hasLiveTask(runId);
    const refused = removalRefusal({ runId, status, leaseLive, taskLive, referrers }, options);
    if (refused) throw refused;
    // What a run owns here, all of it: `owned` in sqlite-retention.ts is the same list.
    this.#runs.delete(runId);
    this.#memos.forget(runId);
    this.#queue.drop(runId);
    this.#limits.forget(runId);
    this.#signals.forget(runId);
    return { id: runId, graph, status, createdAt };
  }

  async close(): Promise<void> {
    this.#queue.close();
  }

  readonly runLimit: LimitStore['runLimit'] = async (runId) => this.#limits.get(runId);
  readonly listQueued: LimitStore['listQueued'] = async (f = {}) => this.#limits.queued(f);
  readonly activeCount: LimitStore['activeCount'] = async (g, k) => this.#limits.active(g, k);

  /** A run's new status, as its limit follows it: the runs given a freed slot are woken. */
  #follow(runId: string, status: StoredStatus, at: number): void {
    for (const woken of this.#limits.follow(runId, status, at))
      this.#queue.arrive(woken, null, at, true);
  }

  #record(rows: RunRows): RunRecord {
    return { ...rows.run, lease: leaseView(rows.lease, this.#now()) };
  }

  #rows(runId: string): RunRows {
    const rows = this.#runs.get(runId);
    if (rows === undefined)
      throw new WaymarkError('RUN_NOT_FOUND', `there is no run "${runId}"`, { retryable: false });
    return rows;
  }
}
