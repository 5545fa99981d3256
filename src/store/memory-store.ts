import { WaymarkError } from '../error/waymark-error.js';
import { type LeaseRow, leaseLost, leaseView, runOwned, takeLease } from './internal/leases.js';
import { waitClosed } from './internal/waits.js';
import type {
  Commit,
  EffectRecord,
  Lease,
  LeaseClaim,
  LoadedRun,
  MemoRecord,
  NewRun,
  RunFilter,
  RunPosition,
  RunRecord,
  RunUsage,
  Store,
  StoredEvent,
  TimerRecord,
  WaitRecord,
} from './store.js';
import { storeFormatVersion } from './store.js';

interface RunRows {
  run: Omit<RunRecord, 'lease'>;
  events: StoredEvent[];
  snapshots: { seq: number; data: string }[];
  effects: Map<string, EffectRecord>;
  waits: Map<string, WaitRecord>;
  timers: Map<string, TimerRecord>;
  lease: LeaseRow | undefined;
}

/** Options of a {@link MemoryStore}. */
export interface MemoryStoreOptions {
  /** The store's clock, which alone decides when a lease expires. Default `Date.now`. */
  readonly now?: () => number;
}

/**
 * A store that keeps everything in this process: for tests, and for runs that need resume
 * within one process only. Same contract as the SQLite and PostgreSQL stores.
 *
 * @example
 * const store = new MemoryStore();
 * const first = await run(g, input, { store });
 * const again = await resume(store, g, first.runId);
 */
export class MemoryStore implements Store {
  readonly #runs = new Map<string, RunRows>();
  readonly #memos: MemoRecord[] = [];
  readonly #now: () => number;

  constructor(options: MemoryStoreOptions = {}) {
    this.#now = options.now ?? Date.now;
  }

  async createRun(run: NewRun): Promise<void> {
    if (this.#runs.has(run.id))
      throw new WaymarkError('RUN_EXISTS', `run "${run.id}" exists already`, { retryable: false });
    const record: RunRows['run'] = {
      id: run.id,
      graph: run.graph,
      graphHash: run.graphHash,
      graphVersion: run.graphVersion,
      stateVersion: run.stateVersion,
      format: storeFormatVersion,
      status: run.status,
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
    });
  }

  async commit(runId: string, commit: Commit): Promise<void> {
    const rows = this.#rows(runId);
    const epoch = commit.epoch ?? null;
    if (epoch !== null && epoch !== rows.lease?.epoch) throw leaseLost(runId, epoch, rows.lease);
    if (commit.seq !== rows.run.seq + 1) {
      throw new WaymarkError(
        'STORE_CONFLICT',
        `run "${runId}" is at sequence ${rows.run.seq}; a commit for ${commit.seq} is stale or out of order`,
        { details: { runId, current: rows.run.seq, attempted: commit.seq } },
      );
    }
    rows.events.push({ seq: commit.seq, at: commit.at, event: commit.event, trace: commit.trace });
    if (commit.snapshot !== null) {
      // The first and the newest snapshots are the only ones ever read: keep just those.
      rows.snapshots = [rows.snapshots[0]!, { seq: commit.seq, data: commit.snapshot }];
    }
    rows.run = {
      ...rows.run,
      seq: commit.seq,
      status: commit.status,
      error: commit.error,
      updatedAt: commit.at,
    };
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
    const statuses = filter.status === undefined ? undefined : new Set([filter.status].flat());
    const runs = [...this.#runs.values()]
      .map((r) => this.#record(r))
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
    return filter.limit === undefined ? runs : runs.slice(0, Math.max(0, filter.limit));
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

  async recordEffect(effect: EffectRecord): Promise<EffectRecord> {
    const effects = this.#rows(effect.runId).effects;
    const existing = effects.get(effect.key);
    if (existing !== undefined) return existing;
    effects.set(effect.key, effect);
    return effect;
  }

  async getEffect(runId: string, key: string): Promise<EffectRecord | undefined> {
    return this.#rows(runId).effects.get(key);
  }

  async listEffects(runId: string): Promise<EffectRecord[]> {
    return [...this.#rows(runId).effects.values()].sort(
      (a, b) => a.at - b.at || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0),
    );
  }

  async openWait(wait: WaitRecord): Promise<void> {
    const waits = this.#rows(wait.runId).waits;
    // Opening the same request again (a replayed step) keeps the first record and its answer.
    if (!waits.has(wait.requestId))
      waits.set(wait.requestId, { ...wait, closedAt: wait.closedAt ?? null });
  }

  async answerWait(
    runId: string,
    requestId: string,
    answer: string,
    by: string,
    at: number,
  ): Promise<WaitRecord> {
    const waits = this.#rows(runId).waits;
    const wait = waits.get(requestId);
    if (wait === undefined) {
      throw new WaymarkError('WAIT_NOT_FOUND', `run "${runId}" has no wait "${requestId}"`, {
        retryable: false,
      });
    }
    if (wait.answer === null && wait.closedAt) throw waitClosed(runId, requestId);
    if (wait.answer !== null) {
      throw new WaymarkError(
        'WAIT_ALREADY_ANSWERED',
        `wait "${requestId}" of run "${runId}" was answered by ${wait.answeredBy} already`,
        { retryable: false },
      );
    }
    const answered = { ...wait, answer, answeredBy: by, answeredAt: at };
    waits.set(requestId, answered);
    return answered;
  }

  async listWaits(runId: string, options: { readonly open?: boolean } = {}): Promise<WaitRecord[]> {
    const waits = [...this.#rows(runId).waits.values()].sort((a, b) => a.openedAt - b.openedAt);
    return options.open === undefined
      ? waits
      : waits.filter((w) => (w.answer === null && !w.closedAt) === options.open);
  }

  async putMemo(memo: MemoRecord): Promise<void> {
    this.#memos.push(memo);
  }

  async findMemo(
    graph: string,
    node: string,
    nodeVersion: number,
    inputHash: string,
  ): Promise<MemoRecord | undefined> {
    return this.#memos.findLast(
      (m) =>
        m.graph === graph &&
        m.node === node &&
        m.nodeVersion === nodeVersion &&
        m.inputHash === inputHash,
    );
  }

  async close(): Promise<void> {}

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

/** Whether a run's labels (JSON, or null) hold every wanted label with its value. */
function hasLabels(labels: string | null, wanted: RunFilter['labels']): boolean {
  if (wanted === undefined) return true;
  let have: Record<string, unknown>;
  try {
    have = labels === null ? {} : (JSON.parse(labels) as Record<string, unknown>);
  } catch {
    return false;
  }
  return Object.entries(wanted).every(([key, value]) => have[key] === value);
}

/** Whether a run comes after `position` in a listing (older, or as old with a smaller id). */
function isAfter(run: RunRecord, position: RunPosition): boolean {
  return (
    run.createdAt < position.createdAt ||
    (run.createdAt === position.createdAt && run.id < position.id)
  );
}
