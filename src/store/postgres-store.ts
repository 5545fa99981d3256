import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { WaymarkError } from '../error/waymark-error.js';
import { CommitFollowers } from './internal/commit-followers.js';
import { mergeGroup } from './internal/commit-group.js';
import { checkLeaseMs, leaseLost, runOwned } from './internal/leases.js';
import { closedStore, quoteSchema, unavailable, uniqueViolation } from './internal/pg-errors.js';
import {
  bigintParam,
  commitExtras,
  limitParam,
  type PostgresStoreOptions,
  postgresOptions,
} from './internal/pg-params.js';
import { tunedConnections } from './internal/pg-planner.js';
import { workChannel } from './internal/pg-queue-sql.js';
import { pgTypes, readPgRun } from './internal/pg-rows.js';
import { migratePg } from './internal/pg-schema.js';
import { type PgStatements, pgStatements, type Statement } from './internal/pg-sql.js';
import { watchChannel } from './internal/pg-watch-sql.js';
import {
  Columns,
  checkHistory,
  corrupt,
  type Row,
  readEffect,
  readEvent,
  readLease,
  readMemo,
  readSnapshot,
  readTimer,
  readWait,
} from './internal/rows.js';
import { waitClosed } from './internal/waits.js';
import type {
  ClaimedRun,
  ClaimedTask,
  Commit,
  CommitFollower,
  EffectRecord,
  FinishedTask,
  InboxRecord,
  Lease,
  LeaseClaim,
  LoadedRun,
  MemoRecord,
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
  WorkKind,
  WorkQueue,
} from './store.js';
import { isPlainGroup, storeFormatVersion } from './store.js';

export type { PostgresStoreOptions } from './internal/pg-params.js';

/** The schema a store without a `schema` option keeps its tables in. */
export const defaultPostgresSchema = 'waymark';

/** How often a refused commit or claim is tried again when the refusal no longer holds. */
const maxRetries = 3;

/** There is no such run in the store. */
function runNotFound(runId: string): WaymarkError {
  return new WaymarkError('RUN_NOT_FOUND', `there is no run "${runId}"`, { retryable: false });
}

/**
 * The store on PostgreSQL, through node-postgres: many processes on many machines share one
 * database. Each step's commit is one statement, fenced by the run's seq and lease epoch;
 * leases expire by the database's clock. The store creates and migrates its schema on its first
 * call (or in {@link PostgresStore.open}). Import it from `waymark/postgres`.
 *
 * @example
 * import { PostgresStore } from 'waymark/postgres';
 * const store = await PostgresStore.open('postgres://localhost/app'); // schema "waymark"
 * const first = await run(g, input, { store });
 * await store.close();
 */
/** How long a watcher's row lives without renewal (it is renewed every third of it). */
const watchLeaseMs = 30_000;

export class PostgresStore implements Store, WorkQueue, RunCommits {
  /** The PostgreSQL schema that holds the store's tables. */
  readonly schema: string;
  readonly #pool: pg.Pool;
  readonly #ownsPool: boolean;
  readonly #quoted: string;
  readonly #sql: PgStatements;
  #setup: Promise<void> | undefined;
  #migrated = false;
  #closed = false;
  readonly #notify: boolean;
  readonly #create: boolean;
  readonly #connection: pg.ClientConfig;
  #listener: Promise<pg.Client | undefined> | undefined;
  /** Who waits for work, and for which kind (none: any). */
  readonly #waiting = new Map<() => void, WorkKind | undefined>();
  readonly #notified: Record<WorkKind, number> = { runs: 0, tasks: 0 };
  #listening = false;
  readonly #followers = new CommitFollowers();
  readonly #watcher = randomUUID();
  #renewing: ReturnType<typeof setInterval> | undefined;

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
    const options = postgresOptions(connectionOrOptions);
    this.schema = options.schema ?? defaultPostgresSchema;
    this.#quoted = quoteSchema(this.schema);
    this.#sql = pgStatements(this.#quoted);
    this.#ownsPool = options.pool === undefined;
    this.#notify = options.notify ?? true;
    this.#create = options.create ?? true;
    this.#connection = {
      application_name: 'waymark-listen',
      connectionTimeoutMillis: options.connectTimeoutMs ?? 10_000,
    };
    this.#pool =
      options.pool ??
      new pg.Pool({
        ...(options.connectionString !== undefined && {
          connectionString: options.connectionString,
        }),
        max: options.poolSize ?? 10,
        connectionTimeoutMillis: options.connectTimeoutMs ?? 10_000,
        // Named in pg_stat_activity (a connection string's own application_name wins).
        application_name: 'waymark',
        // A process that forgets close() still exits once its connections are idle.
        allowExitOnIdle: true,
        // Plans by index whatever the statistics (pg-planner.ts). Not for a given pool: its
        // connections serve other code too.
        ...tunedConnections,
      });
    // An idle connection whose server went away: the pool drops it and opens another on the
    // next call, which reports STORE_UNAVAILABLE if the server is still gone.
    if (this.#ownsPool) this.#pool.on('error', () => {});
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
      await store.#ready();
    } catch (error) {
      await store.close();
      throw error;
    }
    return store;
  }

  async createRun(run: NewRun): Promise<void> {
    const result = await this.#query(this.#sql.createRun, [
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
    ]);
    if (result.rowCount === 0) {
      throw new WaymarkError('RUN_EXISTS', `run "${run.id}" exists already`, {
        retryable: false,
      });
    }
  }

  async commit(runId: string, commit: Commit): Promise<void> {
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
        ? await this.#query(this.#sql.commitStep, values, damaged(runId, seq))
        : await this.#query(this.#sql.commitFull, values, damaged(runId, seq));
      if ((simple ? result.rowCount : result.rows[0]?.done) === 1) return;
      await this.#refused(runId, seq, epoch, attempt);
    }
  }

  /**
   * Commits consecutive steps of one run in one statement, all or none: fenced as one commit is,
   * by the first one's seq and by their epoch (the same for all). A wait closed in the group
   * that was opened before it is stamped with the group's last time.
   * @throws WaymarkError as `commit` does, with nothing written.
   */
  async commitAll(runId: string, commits: readonly Commit[]): Promise<void> {
    if (commits.length === 0) return;
    if (commits.length === 1) return this.commit(runId, commits[0]!);
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
      const result = await this.#query(this.#sql.commitGroup, values, damaged(runId, first));
      if (result.rows[0]?.done === 1) return;
      await this.#refused(runId, first, epoch, attempt);
    }
  }

  /**
   * Why a commit at `seq` wrote nothing, as the contract names it (reading the run explains it,
   * and fails by itself if the run is gone or its row is damaged); returns when the run reached
   * seq - 1 between the two statements, so that the commit is in order now and is taken again.
   */
  async #refused(runId: string, seq: number, epoch: number | null, attempt: number): Promise<void> {
    const run = await this.getRun(runId);
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

  async acquire(runId: string, claim: LeaseClaim): Promise<Lease> {
    checkLeaseMs(runId, claim.leaseMs);
    const { owner, leaseMs } = claim;
    const { host = null, pid = null, takeOver = null } = claim;
    for (let attempt = 1; ; attempt++) {
      const { rows } = await this.#query(this.#sql.acquire, [
        runId,
        owner,
        host,
        pid,
        leaseMs,
        takeOver,
      ]);
      if (rows[0] !== undefined) {
        const c = new Columns(rows[0], { runId, table: 'runs' });
        return { runId, owner, epoch: c.integer('epoch'), expiresAt: c.integer('expires_at') };
      }
      const { rows: held } = await this.#query(this.#sql.leaseOf, [runId]);
      if (held[0] === undefined) throw runNotFound(runId);
      const lease = readLease(held[0], runId);
      const now = new Columns(held[0], { runId, table: 'runs' }).integer('now');
      const refused =
        lease !== undefined &&
        lease.expiresAt > now &&
        lease.owner !== owner &&
        lease.epoch !== claim.takeOver;
      // The lease expired or was released between the two statements: claim it again.
      if (refused || attempt === maxRetries) throw runOwned(runId, lease!, now);
    }
  }

  async renew(
    leases: readonly Lease[],
    leaseMs: number,
  ): Promise<{ renewed: Lease[]; lost: string[] }> {
    if (leases.length === 0) return { renewed: [], lost: [] };
    checkLeaseMs(leases[0]!.runId, leaseMs);
    const { rows } = await this.#query(this.#sql.renew, [
      leases.map((l) => l.runId),
      leases.map((l) => l.epoch),
      leases.map((l) => l.owner),
      leaseMs,
    ]);
    // Which leases held: the run's epoch and owner still theirs. Keyed by both, with the run.
    const key = (runId: unknown, epoch: unknown, owner: unknown) =>
      JSON.stringify([runId, epoch, owner]);
    const held = new Map(
      rows.map((row) => [
        key(row.id, row.epoch, row.owner),
        new Columns(row, { runId: String(row.id), table: 'runs' }).integer('expires_at'),
      ]),
    );
    const renewed: Lease[] = [];
    const lost: string[] = [];
    for (const lease of leases) {
      const expiresAt = held.get(key(lease.runId, lease.epoch, lease.owner));
      if (expiresAt === undefined) lost.push(lease.runId);
      else renewed.push({ ...lease, expiresAt });
    }
    return { renewed, lost };
  }

  async release(lease: Lease): Promise<void> {
    await this.#query(this.#sql.release, [lease.runId, lease.epoch, lease.owner]);
  }

  async listTimers(runId: string): Promise<TimerRecord[]> {
    const { rows } = await this.#query(this.#sql.listTimers, [runId]);
    if (rows.length === 0) throw runNotFound(runId);
    return rows.filter((row) => row.id !== null).map(readTimer);
  }

  async dueTimers(at: number, limit?: number): Promise<TimerRecord[]> {
    const { rows } = await this.#query(this.#sql.dueTimers, [at, limitParam(limit)]);
    return rows.map(readTimer);
  }

  async snapshotAt(runId: string, seq: number): Promise<{ seq: number; data: string } | undefined> {
    const { rows } = await this.#query(this.#sql.snapshotAt, [runId, bigintParam(seq, -1)]);
    return rows[0] === undefined ? undefined : readSnapshot(rows[0], runId);
  }

  async loadRun(runId: string): Promise<LoadedRun | undefined> {
    const rows = await this.#history(this.#sql.loadRun, [runId]);
    if (rows === undefined) return undefined;
    return loaded(runId, rows);
  }

  async claimAndLoadRuns(claim: WorkClaim): Promise<ClaimedRun[]> {
    checkLeaseMs('(claim)', claim.leaseMs);
    const { rows } = await this.#query(this.#sql.claimAndLoad, runClaimValues(claim));
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
        const inbox = parts.inbox
          .map((row) => {
            const c = new Columns(row, { runId, table: 'inbox' });
            return {
              id: c.integer('inbox_id'),
              runId,
              attempt: c.textOrNull('inbox_attempt'),
              at: c.time('inbox_at'),
            };
          })
          .sort((a, b) => a.id - b.id);
        claimed.push({ lease, run: loaded(runId, { run: head, events }), inbox });
      } catch (error) {
        claimed.push({ lease, error });
      }
    }
    return claimed;
  }

  async getRun(runId: string): Promise<RunRecord | undefined> {
    const { rows } = await this.#query(this.#sql.getRun, [runId]);
    return rows[0] === undefined ? undefined : readPgRun(rows[0], runId);
  }

  async listRuns(filter: RunFilter = {}): Promise<RunRecord[]> {
    const { rows } = await this.#query(this.#sql.listRuns, [
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

  async events(runId: string, afterSeq = 0): Promise<StoredEvent[]> {
    const after = Math.max(0, bigintParam(afterSeq, 0));
    const rows = await this.#history(this.#sql.events, [runId, after]);
    if (rows === undefined) throw runNotFound(runId);
    return [...checkHistory(readPgRun(rows.run, runId), rows.events, after)];
  }

  async usage(runId: string): Promise<RunUsage> {
    const { rows } = await this.#query(this.#sql.usage, [runId]);
    if (rows[0] === undefined) throw runNotFound(runId);
    const c = new Columns(rows[0], { runId, table: 'events' });
    return {
      events: c.integer('events'),
      eventBytes: c.integer('event_bytes'),
      snapshots: c.integer('snapshots'),
      snapshotBytes: c.integer('snapshot_bytes'),
    };
  }

  async recordEffect(effect: EffectRecord): Promise<EffectRecord> {
    const { runId, key, result, at } = effect;
    const { rows } = await this.#query(this.#sql.recordEffect, [runId, key, result, at]);
    if (rows[0] === undefined) throw runNotFound(runId);
    if (rows[0].key !== null) return readEffect(rows[0], runId);
    // Another call recorded it first; this statement, started before it committed, could not
    // see its row, the next one does.
    const stands = await this.getEffect(runId, key);
    if (stands === undefined) throw corrupt(runId, `its effect "${key}" vanished`, { key });
    return stands;
  }

  async getEffect(runId: string, key: string): Promise<EffectRecord | undefined> {
    const { rows } = await this.#query(this.#sql.getEffect, [runId, key]);
    if (rows[0] === undefined) throw runNotFound(runId);
    return rows[0].key === null ? undefined : readEffect(rows[0], runId);
  }

  async listEffects(runId: string): Promise<EffectRecord[]> {
    const { rows } = await this.#query(this.#sql.listEffects, [runId]);
    if (rows[0] === undefined) throw runNotFound(runId);
    return rows.filter((row) => row.key !== null).map((row) => readEffect(row, runId));
  }

  async openWait(wait: WaitRecord): Promise<void> {
    const { rows } = await this.#query(this.#sql.openWait, [
      wait.runId,
      wait.requestId,
      wait.node,
      wait.activation,
      wait.request,
      wait.openedAt,
      wait.answer,
      wait.answeredBy,
      wait.answeredAt,
      wait.closedAt ?? null,
    ]);
    // Opening the same request again (a replayed step) keeps the first record and its answer.
    if (rows.length === 0) throw runNotFound(wait.runId);
  }

  async answerWait(
    runId: string,
    requestId: string,
    answer: string,
    by: string,
    at: number,
  ): Promise<WaitRecord> {
    const answered = await this.#query(this.#sql.answerWait, [runId, requestId, answer, by, at]);
    if (answered.rows[0] !== undefined) return readWait(answered.rows[0], runId);
    const { rows } = await this.#query(this.#sql.getWait, [runId, requestId]);
    if (rows[0] === undefined) throw runNotFound(runId);
    if (rows[0].request_id === null) {
      throw new WaymarkError('WAIT_NOT_FOUND', `run "${runId}" has no wait "${requestId}"`, {
        retryable: false,
      });
    }
    const record = readWait(rows[0], runId);
    if (record.answer === null && record.closedAt) throw waitClosed(runId, requestId);
    throw new WaymarkError(
      'WAIT_ALREADY_ANSWERED',
      `wait "${requestId}" of run "${runId}" was answered by ${record.answeredBy} already`,
      { retryable: false },
    );
  }

  async listWaits(runId: string, options: { readonly open?: boolean } = {}): Promise<WaitRecord[]> {
    const { rows } = await this.#query(this.#sql.listWaits, [runId, options.open ?? null]);
    if (rows.length === 0) throw runNotFound(runId);
    return rows.filter((row) => row.request_id !== null).map((row) => readWait(row, runId));
  }

  async putMemo(memo: MemoRecord): Promise<void> {
    await this.#query(this.#sql.putMemo, [
      memo.graph,
      memo.node,
      memo.nodeVersion,
      memo.inputHash,
      memo.output,
      memo.runId,
      memo.activation,
      memo.at,
    ]);
  }

  async findMemo(
    graph: string,
    node: string,
    nodeVersion: number,
    inputHash: string,
  ): Promise<MemoRecord | undefined> {
    const { rows } = await this.#query(this.#sql.findMemo, [graph, node, nodeVersion, inputHash]);
    return rows[0] === undefined ? undefined : readMemo(rows[0]);
  }

  async registerWorker(worker: {
    readonly id: string;
    readonly host: string;
    readonly pid: number;
    readonly graphs: WorkerRecord['graphs'];
    readonly leaseMs: number;
  }): Promise<void> {
    checkLeaseMs(worker.id, worker.leaseMs);
    await this.#query(this.#sql.registerWorker, [
      worker.id,
      worker.host,
      worker.pid,
      JSON.stringify(worker.graphs),
      worker.leaseMs,
    ]);
  }

  async unregisterWorker(id: string): Promise<void> {
    await this.#query(this.#sql.unregisterWorker, [id]);
  }

  async listWorkers(): Promise<WorkerRecord[]> {
    const { rows } = await this.#query(this.#sql.listWorkers, []);
    return rows.map((row) => {
      const c = new Columns(row, { runId: String(row.id), table: 'workers' });
      return {
        id: c.text('id'),
        host: c.text('host'),
        pid: c.integer('pid'),
        graphs: JSON.parse(c.text('graphs')) as WorkerRecord['graphs'],
        expiresAt: c.integer('expires_at'),
        live: row.live === true,
      };
    });
  }

  async claimRuns(claim: WorkClaim): Promise<Lease[]> {
    checkLeaseMs('(claim)', claim.leaseMs);
    const { rows } = await this.#query(this.#sql.claimRuns, runClaimValues(claim));
    return rows.map((row) => {
      const c = new Columns(row, { runId: String(row.id), table: 'runs' });
      return {
        runId: c.text('id'),
        owner: claim.owner,
        epoch: c.integer('epoch'),
        expiresAt: c.integer('expires_at'),
      };
    });
  }

  async claimTasks(claim: WorkClaim): Promise<ClaimedTask[]> {
    checkLeaseMs('(claim)', claim.leaseMs);
    const { rows } = await this.#query(this.#sql.claimTasks, [
      claim.graphs.map((g) => g.name),
      claim.graphs.map((g) => g.hash),
      limitParam(claim.limit),
      claim.owner,
      claim.leaseMs,
    ]);
    return rows.map(readTask);
  }

  async renewTasks(
    tasks: readonly ClaimedTask[],
    leaseMs: number,
  ): Promise<{ renewed: ClaimedTask[]; lost: string[] }> {
    if (tasks.length === 0) return { renewed: [], lost: [] };
    checkLeaseMs(tasks[0]!.runId, leaseMs);
    const { rows } = await this.#query(this.#sql.renewTasks, [
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

  async finishTasks(
    finished: readonly FinishedTask[],
    options: { readonly wake?: boolean } = {},
  ): Promise<boolean[]> {
    if (finished.length === 0) return [];
    const { rows } = await this.#query(this.#sql.finishTasks, [
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

  async releaseTask(task: ClaimedTask): Promise<void> {
    await this.#query(this.#sql.releaseTask, [task.runId, task.activation, task.epoch, task.owner]);
  }

  async commitRuns(groups: readonly RunGroup[]): Promise<boolean[]> {
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
    const { rows } = await this.#query(this.#sql.commitRuns, [...heads, ...events, ...consumed]);
    const held = new Set(rows.map((row) => String(row.id)));
    return groups.map((g) => held.has(g.runId));
  }

  async createRuns(
    runs: readonly NewRun[],
    options: { readonly wake?: boolean } = {},
  ): Promise<void> {
    if (runs.length === 0) return;
    const column = <T>(pick: (r: NewRun) => T) => runs.map(pick);
    await this.#query(
      this.#sql.createRuns,
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

  async wake(runId: string, at: number): Promise<void> {
    await this.#query(this.#sql.wake, [runId, at]);
  }

  async inbox(runId: string): Promise<InboxRecord[]> {
    const { rows } = await this.#query(this.#sql.inbox, [runId]);
    return rows.map((row) => {
      const c = new Columns(row, { runId, table: 'inbox' });
      return {
        id: c.integer('id'),
        runId: c.text('run_id'),
        attempt: c.textOrNull('attempt'),
        at: c.time('at'),
      };
    });
  }

  async consume(runId: string, lease: Lease, ids: readonly number[]): Promise<void> {
    if (ids.length === 0) return;
    await this.#query(this.#sql.consume, [runId, ids, lease.epoch, lease.owner]);
  }

  async listTasks(runId: string): Promise<ClaimedTask[]> {
    const { rows } = await this.#query(this.#sql.listTasks, [runId]);
    return rows.map(readTask);
  }

  /** Notifications of new work so far: see {@link waitForWork}'s `since`. */
  get notified(): number {
    return this.#notified.runs + this.#notified.tasks;
  }

  get listening(): boolean {
    return this.#listening;
  }

  notifiedOf(kind: WorkKind): number {
    return this.#notified[kind];
  }

  /**
   * Waits for a notification on this store's work channel (LISTEN on a connection of its own,
   * outside the pool), or `ms`, or `signal`. Notifications are coalesced: every waiter wakes on
   * the next one. With `notify: false` (PgBouncer in transaction mode keeps no LISTEN), or
   * while the listening connection is down, it is a plain poll.
   */
  async waitForWork(
    ms: number,
    signal: AbortSignal,
    since?: number,
    kind?: WorkKind,
  ): Promise<void> {
    if (signal.aborted) return;
    if (this.#notify && !this.#closed) await this.#listen();
    const seen = kind === undefined ? this.notified : this.#notified[kind];
    if (since !== undefined && seen > since) return;
    await new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        this.#waiting.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      signal.addEventListener('abort', done, { once: true });
      this.#waiting.set(done, kind);
    });
  }

  /** The listening connection, opened once; a broken one is dropped and opened again later. */
  #listen(): Promise<pg.Client | undefined> {
    this.#listener ??= (async () => {
      await this.#ready();
      // The pool's own settings (its connection string, or what it was given), not one of its
      // connections: LISTEN must outlive every query.
      const client = new pg.Client({
        ...(this.#pool as unknown as { options: pg.ClientConfig }).options,
        ...this.#connection,
      });
      const drop = () => {
        this.#listener = undefined;
        this.#listening = false;
        client.end().catch(() => {});
      };
      client.on('error', drop);
      client.on('end', () => {
        this.#listener = undefined;
        this.#listening = false;
      });
      const watching = watchChannel(this.#quoted);
      client.on('notification', (message) => {
        if (message.channel === watching) {
          this.#followers.committed(message.payload ?? '');
          return;
        }
        // Payloads are 'tasks' (a task to claim) or 'runs' (an inbox item to fold).
        const kind: WorkKind = message.payload === 'tasks' ? 'tasks' : 'runs';
        this.#notified[kind]++;
        for (const [wake, wants] of [...this.#waiting])
          if (wants === undefined || wants === kind) wake();
      });
      try {
        await client.connect();
        await client.query(`LISTEN ${workChannel(this.#quoted)}; LISTEN ${watching}`);
        this.#listening = true;
        // Commits made while no connection listened were told to nobody: read again.
        this.#followers.all();
        return client;
      } catch {
        drop();
        return undefined;
      }
    })();
    return this.#listener;
  }

  /**
   * Follows a run's commits by LISTEN/NOTIFY: the run is marked watched (a row, renewed while
   * followed), and its commits then notify this store's listening connection. With
   * `notify: false`, or while that connection is down, the follower is not live and `watch()`
   * polls.
   */
  async followCommits(runId: string): Promise<CommitFollower> {
    if (this.#notify && !this.#closed) await this.#listen();
    const { follower, first } = this.#followers.follow(
      runId,
      () => this.#listening,
      async (last) => {
        if (!last) return;
        if ([...this.#followers.runs].length === 0) {
          clearInterval(this.#renewing);
          this.#renewing = undefined;
        }
        if (!this.#closed)
          await this.#query(this.#sql.unwatch, [runId, this.#watcher]).catch(() => {});
      },
    );
    if (first && this.#notify) {
      try {
        await this.#query(this.#sql.watch, [runId, this.#watcher, watchLeaseMs]);
      } catch (error) {
        await follower.close();
        throw error;
      }
    }
    this.#renewing ??= setInterval(() => {
      this.#query(this.#sql.renewWatch, [this.#watcher, watchLeaseMs]).catch(() => {});
    }, watchLeaseMs / 3);
    this.#renewing.unref?.();
    return follower;
  }

  /** Ends the pool the store created (a pool it was given is left to its owner). */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    clearInterval(this.#renewing);
    for (const wake of [...this.#waiting.keys()]) wake();
    const listener = await this.#listener?.catch(() => undefined);
    await listener?.end().catch(() => {});
    if (this.#ownsPool) await this.#pool.end();
  }

  /** Creates or migrates the schema once; a failure is not kept, so the next call tries again. */
  async #ready(): Promise<void> {
    if (this.#closed) throw closedStore(this.schema);
    this.#setup ??= migratePg(this.#pool, this.schema, this.#quoted, this.#create).then(
      () => {
        this.#migrated = true;
      },
      (error: unknown) => {
        this.#setup = undefined;
        throw unavailable(this.schema, error);
      },
    );
    await this.#setup;
  }

  /**
   * Runs one statement. A driver failure becomes STORE_UNAVAILABLE, unless `refusal` names it
   * otherwise (a constraint a damaged row broke).
   */
  async #query(
    statement: Statement,
    values: readonly unknown[],
    refusal?: (error: unknown) => WaymarkError | undefined,
  ): Promise<pg.QueryResult<Row>> {
    if (!this.#migrated || this.#closed) await this.#ready();
    try {
      return await this.#pool.query<Row>({
        name: statement.name,
        text: statement.text,
        values: values as unknown[],
        types: pgTypes,
      });
    } catch (error) {
      throw refusal?.(error) ?? unavailable(this.schema, error);
    }
  }

  /** The run row and its events, from one statement of {@link pgStatements}' history kind. */
  async #history(
    statement: Statement,
    values: readonly unknown[],
  ): Promise<{ run: Row; events: StoredEvent[] } | undefined> {
    const { rows } = await this.#query(statement, values);
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
}

/** A commit at `seq` that met rows of the run already where its rows go: the run is damaged. */
function damaged(runId: string, seq: number) {
  return (failure: unknown) => {
    const constraint = uniqueViolation(failure);
    if (constraint !== 'events_pkey' && constraint !== 'snapshots_pkey') return undefined;
    // The head accepted seq - 1; then a row of the run was already where this one goes.
    return corrupt(runId, `it already has rows at seq ${seq}, past its seq ${seq - 1}`, {
      table: constraint.slice(0, -'_pkey'.length),
      key: seq,
    });
  };
}

/** A tasks row as a task record (claimed or not: owner and epoch as the row has them). */
function readTask(row: Row): ClaimedTask {
  const runId = String(row.run_id);
  const c = new Columns(row, { runId, table: 'tasks', key: String(row.activation) });
  return {
    runId: c.text('run_id'),
    activation: c.text('activation'),
    attempt: c.integer('attempt'),
    node: c.text('node'),
    graph: c.text('graph'),
    graphHash: c.text('graph_hash'),
    notBefore: row.not_before === null ? null : c.integer('not_before'),
    input: c.text('input'),
    owner: c.textOrNull('owner') ?? '',
    epoch: c.integer('epoch'),
    expiresAt: c.integer('expires_at'),
  };
}

/** The parameters of a claim of runs (claimRuns, claimAndLoad). */
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

/** A run as loadRun reads it, from its row (with its latest snapshot) and events after it. */
function loaded(runId: string, rows: { run: Row; events: StoredEvent[] }): LoadedRun {
  const run = readPgRun(rows.run, runId);
  if (run.format > storeFormatVersion) {
    throw new WaymarkError(
      'STORE_VERSION_UNSUPPORTED',
      `run "${runId}" cannot be loaded: it was written in store format ${run.format}, newer than this waymark reads (${storeFormatVersion})`,
      { retryable: false, details: { runId, table: 'runs', column: 'format' } },
    );
  }
  if (rows.run.snapshot_seq === null) {
    throw corrupt(runId, 'it has no snapshot', { table: 'snapshots' });
  }
  const snapshot = readSnapshot(
    { seq: rows.run.snapshot_seq, data: rows.run.snapshot_data },
    runId,
  );
  if (snapshot.seq > run.seq) {
    throw corrupt(runId, `its snapshot at seq ${snapshot.seq} is past the run's seq ${run.seq}`, {
      table: 'snapshots',
      key: snapshot.seq,
    });
  }
  const events = checkHistory(run, rows.events, snapshot.seq);
  return { run, snapshot, events: [...events] };
}
