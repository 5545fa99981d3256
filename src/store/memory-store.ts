import { WaymarkError } from '../error/waymark-error.js';
import type {
  Commit,
  EffectRecord,
  LoadedRun,
  MemoRecord,
  NewRun,
  RunFilter,
  RunRecord,
  RunUsage,
  Store,
  StoredEvent,
  WaitRecord,
} from './store.js';
import { storeFormatVersion } from './store.js';

interface RunRows {
  run: RunRecord;
  events: StoredEvent[];
  snapshots: { seq: number; data: string }[];
  effects: Map<string, EffectRecord>;
  waits: Map<string, WaitRecord>;
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

  async createRun(run: NewRun): Promise<void> {
    if (this.#runs.has(run.id))
      throw new WaymarkError('RUN_EXISTS', `run "${run.id}" exists already`, { retryable: false });
    const record: RunRecord = {
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
    });
  }

  async commit(runId: string, commit: Commit): Promise<void> {
    const rows = this.#rows(runId);
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
  }

  async loadRun(runId: string): Promise<LoadedRun | undefined> {
    const rows = this.#runs.get(runId);
    if (rows === undefined) return undefined;
    const snapshot = rows.snapshots.at(-1)!;
    return { run: rows.run, snapshot, events: rows.events.filter((e) => e.seq > snapshot.seq) };
  }

  async snapshotAt(runId: string, seq: number): Promise<{ seq: number; data: string } | undefined> {
    return this.#runs.get(runId)?.snapshots.findLast((s) => s.seq <= seq);
  }

  async getRun(runId: string): Promise<RunRecord | undefined> {
    return this.#runs.get(runId)?.run;
  }

  async listRuns(filter: RunFilter = {}): Promise<RunRecord[]> {
    const statuses = filter.status === undefined ? undefined : new Set([filter.status].flat());
    const runs = [...this.#runs.values()]
      .map((r) => r.run)
      .filter(
        (r) =>
          (statuses === undefined || statuses.has(r.status)) &&
          (filter.graph === undefined || r.graph === filter.graph),
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

  async openWait(wait: WaitRecord): Promise<void> {
    const waits = this.#rows(wait.runId).waits;
    // Opening the same request again (a replayed step) keeps the first record and its answer.
    if (!waits.has(wait.requestId)) waits.set(wait.requestId, wait);
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
      : waits.filter((w) => (w.answer === null) === options.open);
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

  #rows(runId: string): RunRows {
    const rows = this.#runs.get(runId);
    if (rows === undefined)
      throw new WaymarkError('RUN_NOT_FOUND', `there is no run "${runId}"`, { retryable: false });
    return rows;
  }
}
