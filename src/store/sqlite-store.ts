import { existsSync, mkdirSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import type Database from 'better-sqlite3';
import { WaymarkError } from '../error/waymark-error.js';
import {
  corrupt,
  type Row,
  readEffect,
  readEvent,
  readMemo,
  readRun,
  readSnapshot,
  readWait,
} from './internal/rows.js';
import { migrate } from './internal/schema.js';
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

/** Options of a {@link SqliteStore}. */
export interface SqliteStoreOptions {
  /**
   * The database file, created with its directory if missing; relative paths resolve against
   * `process.cwd()`. Default `.waymark/waymark.db`. `':memory:'` keeps a private database in
   * this connection only, gone when it closes.
   */
  readonly path?: string;
  /**
   * When a commit is on disk. `'normal'` (default): a commit survives any crash of the process,
   * but the last commits before a power loss or an OS crash may be lost. `'full'`: a commit
   * also survives power loss, at a cost per commit (see docs/stores.md).
   */
  readonly synchronous?: 'normal' | 'full';
  /**
   * How long a statement waits for another connection's write lock before the call fails with
   * `STORE_UNAVAILABLE` (retryable). Default 5,000 ms.
   */
  readonly busyTimeoutMs?: number;
  /**
   * Whether a missing file is created (with its directory) and given waymark's schema. Default
   * `true`. With `false` only an existing waymark database opens and nothing is created: a
   * missing file is `STORE_UNAVAILABLE`, a file without waymark's schema `STORE_CORRUPT`.
   */
  readonly create?: boolean;
}

/** The SQLite settings in force on a store's connection, as SQLite reports them. */
export interface SqliteSettings {
  readonly journalMode: string;
  readonly synchronous: 'off' | 'normal' | 'full' | 'extra';
}

/** Where a store without a `path` option keeps its file, under `process.cwd()`. */
export const defaultSqlitePath = '.waymark/waymark.db';

const synchronousNames = ['off', 'normal', 'full', 'extra'] as const;

/** The most events one run can hold: its history is keyed by (run number << 32) + seq. */
const maxSqliteSeq = 0xffff_ffff;

/** How many run numbers a store keeps in memory, so a step does not look its run up. */
const cachedRunNumbers = 1024;

/** The message the commit trigger (schema migration 3) aborts with when it refuses a commit. */
const refusedMessage = 'waymark: commit refused';

// A run row with its head, the newest row of its history that holds a status (normally its
// last row): the columns a RunRecord is read from.
const runColumns = `runs.id, runs.graph, runs.graph_hash, runs.graph_version, runs.state_version,
    runs.format, runs.created_at, runs.labels,
    head.key & 4294967295 AS seq, head.status, head.error, head.at AS updated_at
  FROM runs LEFT JOIN events AS head ON head.key = (
    SELECT key FROM events
    WHERE key BETWEEN runs.num << 32 AND (runs.num << 32) + 4294967295 AND status IS NOT NULL
    ORDER BY key DESC LIMIT 1)`;

// Statements are prepared once per connection; a method runs one of them (SQLite makes it its
// own transaction) or a few in one transaction. better-sqlite3 is synchronous, so a transaction
// never spans an await.
const statements = {
  // Inside the write transaction, so two processes never take the same number.
  insertRun: `INSERT INTO runs (id, graph, graph_hash, graph_version, state_version, format,
      created_at, labels, num)
    VALUES (@id, @graph, @graphHash, @graphVersion, @stateVersion, @format, @createdAt, @labels,
      (SELECT coalesce(max(num), 0) + 1 FROM runs))
    ON CONFLICT (id) DO NOTHING
    RETURNING num`,
  insertHead: `INSERT INTO events (key, at, status) VALUES (@num << 32, @createdAt, @status)`,
  getRun: `SELECT ${runColumns} WHERE runs.id = ?`,
  runNumber: 'SELECT num FROM runs WHERE id = ?',
  // One statement per step: the trigger behind the view moves the head and appends the event.
  // Positional parameters: binding them is measurably cheaper than by name, on every step.
  insertCommit: `INSERT INTO commits (num, seq, at, event, trace, status, error)
    VALUES (?, ?, ?, ?, ?, ?, ?)`,
  insertSnapshot: 'INSERT INTO snapshots (run_id, seq, data) VALUES (?, ?, ?)',
  // Between the first snapshot and the newest, none is ever read again: keep storage linear.
  pruneSnapshots: 'DELETE FROM snapshots WHERE run_id = ? AND seq > 0 AND seq < ?',
  latestSnapshot: 'SELECT seq, data FROM snapshots WHERE run_id = ? ORDER BY seq DESC LIMIT 1',
  snapshotAt:
    'SELECT seq, data FROM snapshots WHERE run_id = ? AND seq <= ? ORDER BY seq DESC LIMIT 1',
  eventsAfter: `SELECT key & 4294967295 AS seq, at, event, trace FROM events
    WHERE key > (@num << 32) + @after AND key <= (@num << 32) + 4294967295
    ORDER BY key`,
  listRuns: `SELECT ${runColumns}
    WHERE (@statuses IS NULL OR head.status IN (SELECT value FROM json_each(@statuses)))
      AND (@graph IS NULL OR runs.graph = @graph)
    ORDER BY runs.created_at DESC, runs.id DESC
    LIMIT @limit`,
  usage: `SELECT
      (SELECT count(*) FROM events
        WHERE key > (@num << 32) AND key <= (@num << 32) + 4294967295) AS events,
      (SELECT coalesce(sum(octet_length(event) + coalesce(octet_length(trace), 0)), 0)
        FROM events
        WHERE key > (@num << 32) AND key <= (@num << 32) + 4294967295) AS eventBytes,
      (SELECT count(*) FROM snapshots WHERE run_id = @id) AS snapshots,
      (SELECT coalesce(sum(octet_length(data)), 0) FROM snapshots WHERE run_id = @id) AS snapshotBytes`,
  insertEffect: `INSERT INTO effects (run_id, key, result, at) VALUES (@runId, @key, @result, @at)
    ON CONFLICT (run_id, key) DO NOTHING`,
  getEffect: 'SELECT * FROM effects WHERE run_id = ? AND key = ?',
  insertWait: `INSERT INTO waits (run_id, request_id, node, activation, request, opened_at, answer,
      answered_by, answered_at)
    VALUES (@runId, @requestId, @node, @activation, @request, @openedAt, @answer, @answeredBy,
      @answeredAt)
    ON CONFLICT (run_id, request_id) DO NOTHING`,
  // One conditional UPDATE: of two answers racing, only one finds `answer IS NULL`.
  answerWait: `UPDATE waits SET answer = @answer, answered_by = @by, answered_at = @at
    WHERE run_id = @runId AND request_id = @requestId AND answer IS NULL
    RETURNING *`,
  getWait: 'SELECT * FROM waits WHERE run_id = ? AND request_id = ?',
  listWaits: `SELECT * FROM waits
    WHERE run_id = @runId AND (@open IS NULL OR (answer IS NULL) = @open)
    ORDER BY opened_at, rowid`,
  insertMemo: `INSERT INTO memos (graph, node, node_version, input_hash, output, run_id, activation, at)
    VALUES (@graph, @node, @nodeVersion, @inputHash, @output, @runId, @activation, @at)`,
  findMemo: `SELECT * FROM memos
    WHERE graph = ? AND node = ? AND node_version = ? AND input_hash = ?
    ORDER BY rowid DESC LIMIT 1`,
  begin: 'BEGIN',
  // Takes the write lock at once: a read-then-write transaction never has to upgrade its lock.
  beginWrite: 'BEGIN IMMEDIATE',
  commit: 'COMMIT',
  rollback: 'ROLLBACK',
} as const;

type Statements = { readonly [K in keyof typeof statements]: Database.Statement };

/**
 * The embedded store: one SQLite file (WAL mode) through better-sqlite3. Runs survive the
 * process; several processes may share the file, and a commit against a stale sequence number
 * fails with STORE_CONFLICT whichever connection made it. Import it from `waymark/sqlite`.
 *
 * @example
 * import { SqliteStore } from 'waymark/sqlite';
 * const store = new SqliteStore(); // .waymark/waymark.db under the current directory
 * const first = await run(g, input, { store });
 */
export class SqliteStore implements Store {
  /** The absolute path of the database file. */
  readonly path: string;
  readonly #db: Database.Database;
  readonly #sql: Statements;
  /** Run numbers by run id, newest last: a number never changes once the run exists. */
  readonly #numbers = new Map<string, number>();

  /**
   * Opens (creating if needed) the file and brings its schema up to date.
   *
   * @throws WaymarkError `STORE_CORRUPT` if the file is not a waymark database (not SQLite, or
   *   another application's tables); `STORE_VERSION_UNSUPPORTED` if its schema is newer than
   *   this waymark; `STORE_UNAVAILABLE` if it cannot be opened (a directory, no permission, the
   *   driver's native module missing); `OPTIONS_INVALID` for an unknown `synchronous` value.
   */
  constructor(options: SqliteStoreOptions = {}) {
    const synchronous = options.synchronous ?? 'normal';
    if (synchronous !== 'normal' && synchronous !== 'full') {
      throw new WaymarkError(
        'OPTIONS_INVALID',
        `synchronous must be 'normal' or 'full', not ${JSON.stringify(synchronous)}`,
        { retryable: false },
      );
    }
    const busyTimeoutMs = options.busyTimeoutMs ?? 5_000;
    if (!(Number.isInteger(busyTimeoutMs) && busyTimeoutMs >= 0)) {
      throw new WaymarkError(
        'OPTIONS_INVALID',
        `busyTimeoutMs must be a whole number >= 0, not ${JSON.stringify(busyTimeoutMs)}`,
        { retryable: false },
      );
    }
    const path = options.path ?? defaultSqlitePath;
    this.path = path === ':memory:' ? path : resolve(path);
    const create = options.create ?? true;
    const db = openFile(this.path, create, busyTimeoutMs);
    try {
      // Before any pragma: WAL mode would be written into another application's file.
      ownSchemaOrNone(db, this.path, create);
      db.pragma('journal_mode = WAL');
      db.pragma(`synchronous = ${synchronous.toUpperCase()}`);
      db.pragma('foreign_keys = ON');
      migrate(db, Date.now());
      this.#sql = Object.fromEntries(
        Object.entries(statements).map(([name, sql]) => [name, db.prepare(sql)]),
      ) as unknown as Statements;
    } catch (error) {
      db.close();
      throw unreadableFile(this.path, error);
    }
    this.#db = db;
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
    this.#write(() => {
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
      this.#sql.insertHead.run({ num: inserted.num, createdAt: run.createdAt, status: run.status });
      this.#sql.insertSnapshot.run(run.id, 0, run.snapshot);
    });
  }

  async commit(runId: string, commit: Commit): Promise<void> {
    if (commit.seq > maxSqliteSeq) throw tooLong(runId, commit.seq);
    const num = this.#number(runId);
    const { seq, at, event, trace, status, error } = commit;
    try {
      // Most steps carry no snapshot: one INSERT, in its own implicit transaction.
      if (commit.snapshot === null) {
        this.#sql.insertCommit.run(num, seq, at, event, trace, status, error);
        return;
      }
      const snapshot = commit.snapshot;
      this.#write(() => {
        this.#sql.insertCommit.run(num, seq, at, event, trace, status, error);
        this.#sql.insertSnapshot.run(runId, commit.seq, snapshot);
        this.#sql.pruneSnapshots.run(runId, commit.seq);
      });
    } catch (error) {
      throw this.#refused(runId, commit.seq, error);
    }
  }

  async snapshotAt(runId: string, seq: number): Promise<{ seq: number; data: string } | undefined> {
    return this.#read(() => {
      const row = this.#sql.snapshotAt.get(runId, seq) as Row | undefined;
      return row === undefined ? undefined : readSnapshot(row, runId);
    });
  }

  async loadRun(runId: string): Promise<LoadedRun | undefined> {
    return this.#read(() => {
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
      if (row === undefined) throw corrupt(runId, 'it has no snapshot', { table: 'snapshots' });
      const snapshot = readSnapshot(row, runId);
      if (snapshot.seq > run.seq) {
        throw corrupt(
          runId,
          `its snapshot at seq ${snapshot.seq} is past the run's seq ${run.seq}`,
          { table: 'snapshots', key: snapshot.seq },
        );
      }
      const events = this.#eventsAfter(run, this.#number(runId), snapshot.seq);
      return { run, snapshot, events };
    });
  }

  async getRun(runId: string): Promise<RunRecord | undefined> {
    return this.#run(runId);
  }

  async listRuns(filter: RunFilter = {}): Promise<RunRecord[]> {
    const rows = this.#sql.listRuns.all({
      statuses: filter.status === undefined ? null : JSON.stringify([filter.status].flat()),
      graph: filter.graph ?? null,
      // SQLite reads a negative LIMIT as "no limit".
      limit: filter.limit === undefined ? -1 : Math.max(0, Math.trunc(filter.limit)),
    }) as Row[];
    // A row that cannot be read is left out rather than failing the whole listing: every other
    // run stays usable, and loading the bad one still says STORE_CORRUPT.
    return rows.flatMap((row) => {
      try {
        return [readRun(row, String(row.id))];
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

  async recordEffect(effect: EffectRecord): Promise<EffectRecord> {
    return this.#write(() => {
      this.#existing(effect.runId);
      this.#sql.insertEffect.run({ ...effect });
      return readEffect(this.#sql.getEffect.get(effect.runId, effect.key) as Row, effect.runId);
    });
  }

  async getEffect(runId: string, key: string): Promise<EffectRecord | undefined> {
    return this.#read(() => {
      const row = this.#sql.getEffect.get(runId, key) as Row | undefined;
      if (row !== undefined) return readEffect(row, runId);
      this.#existing(runId);
      return undefined;
    });
  }

  async openWait(wait: WaitRecord): Promise<void> {
    this.#write(() => {
      this.#existing(wait.runId);
      // Opening the same request again (a replayed step) keeps the first record and its answer.
      this.#sql.insertWait.run({ ...wait });
    });
  }

  async answerWait(
    runId: string,
    requestId: string,
    answer: string,
    by: string,
    at: number,
  ): Promise<WaitRecord> {
    return this.#write(() => {
      const row = this.#sql.answerWait.get({ runId, requestId, answer, by, at }) as Row | undefined;
      if (row !== undefined) return readWait(row, runId);
      this.#existing(runId);
      const wait = this.#sql.getWait.get(runId, requestId) as Row | undefined;
      if (wait === undefined) {
        throw new WaymarkError('WAIT_NOT_FOUND', `run "${runId}" has no wait "${requestId}"`, {
          retryable: false,
        });
      }
      throw new WaymarkError(
        'WAIT_ALREADY_ANSWERED',
        `wait "${requestId}" of run "${runId}" was answered by ${readWait(wait, runId).answeredBy} already`,
        { retryable: false },
      );
    });
  }

  async listWaits(runId: string, options: { readonly open?: boolean } = {}): Promise<WaitRecord[]> {
    return this.#read(() => {
      const open = options.open === undefined ? null : Number(options.open);
      const rows = this.#sql.listWaits.all({ runId, open }) as Row[];
      if (rows.length === 0) this.#existing(runId);
      return rows.map((row) => readWait(row, runId));
    });
  }

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

  async close(): Promise<void> {
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
    return row === undefined ? undefined : readRun(row, runId);
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
      throw corrupt(runId, `its runs row holds ${JSON.stringify(num)} in column num`, {
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
  #refused(runId: string, seq: number, error: unknown): unknown {
    const code = (error as { code?: unknown }).code;
    const refused =
      code === 'SQLITE_CONSTRAINT_TRIGGER' && (error as Error).message === refusedMessage;
    if (!refused && code !== 'SQLITE_CONSTRAINT_PRIMARYKEY') return unavailable(this.path, error);
    // The trigger accepted seq - 1 as the head; then an event or snapshot row was in the way.
    if (!refused) {
      return corrupt(runId, `it already has rows at seq ${seq}, past its seq ${seq - 1}`, {
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
    const events = (this.#sql.eventsAfter.all({ num, after }) as Row[]).map((row) =>
      readEvent(row, run.id),
    );
    let expected = after + 1;
    for (const event of events) {
      if (event.seq !== expected || event.seq > run.seq) {
        const why =
          event.seq > run.seq
            ? `its event at seq ${event.seq} is past the run's seq ${run.seq}`
            : `its events jump from seq ${expected - 1} to seq ${event.seq}`;
        throw corrupt(run.id, why, { table: 'events', key: event.seq });
      }
      expected++;
    }
    // The head is itself the row at the run's seq, so the events cannot end before it.
    return events;
  }
}

function runNotFound(runId: string): WaymarkError {
  return new WaymarkError('RUN_NOT_FOUND', `there is no run "${runId}"`, { retryable: false });
}

function tooLong(runId: string, seq: number): WaymarkError {
  return new WaymarkError(
    'STORE_LIMIT',
    `run "${runId}" cannot take commit ${seq}: a SQLite store holds at most ${maxSqliteSeq} events per run`,
    { retryable: false, details: { runId, attempted: seq, limit: maxSqliteSeq } },
  );
}

function conflict(runId: string, current: unknown, attempted: number): WaymarkError {
  return new WaymarkError(
    'STORE_CONFLICT',
    `run "${runId}" is at sequence ${current}; a commit for ${attempted} is stale or out of order`,
    { details: { runId, current, attempted } },
  );
}

// better-sqlite3 is CommonJS: required directly, it skips the ES module loader's translation
// (and the start-up of its CommonJS export parser), which `waymark ls` would pay on every start.
const require = createRequire(import.meta.url);
const Driver = require('better-sqlite3') as typeof Database;

/**
 * Where better-sqlite3's build put its native module: handed to it, it skips the search its
 * `bindings` helper makes through a dozen candidate paths at every first open. Anywhere else (a
 * prebuilt binary, a debug build), that search finds it as before.
 */
function builtBinding(): string | undefined {
  try {
    const file = join(
      dirname(require.resolve('better-sqlite3')),
      '..',
      'build',
      'Release',
      'better_sqlite3.node',
    );
    return existsSync(file) ? file : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Opens the file, mapping what keeps it from opening to a code: a directory, a missing file
 * (when it may not be created), a directory that cannot be made, the driver's native module.
 */
function openFile(path: string, create: boolean, timeout: number): Database.Database {
  if (path !== ':memory:') {
    if (existsSync(path) && statSync(path).isDirectory()) {
      throw cannotOpen(path, 'directory', `${path} is a directory, not a database file`);
    }
    if (!create && !existsSync(path)) {
      throw cannotOpen(path, 'missing', `there is no database at ${path}`);
    }
    try {
      if (create) mkdirSync(dirname(path), { recursive: true });
    } catch (error) {
      const why = error instanceof Error ? error.message : String(error);
      throw cannotOpen(path, 'no-directory', `cannot make the directory of ${path}: ${why}`, error);
    }
  }
  try {
    const nativeBinding = builtBinding();
    return new Driver(path, {
      timeout,
      fileMustExist: !create,
      ...(nativeBinding !== undefined && { nativeBinding }),
    });
  } catch (error) {
    // better-sqlite3 loads its native module at the first open.
    const message = error instanceof Error ? error.message : String(error);
    const code = (error as { code?: unknown }).code;
    if (
      code === 'ERR_DLOPEN_FAILED' ||
      message.includes('bindings') ||
      message.includes('NODE_MODULE_VERSION')
    ) {
      const first = message.split('\n')[0];
      throw cannotOpen(
        path,
        'driver-broken',
        `better-sqlite3 is installed, but its native module cannot be loaded: ${first}`,
        error,
      );
    }
    throw unavailable(path, error);
  }
}

/** Refuses a file that holds tables but not waymark's, and (unless creating) an empty one. */
function ownSchemaOrNone(db: Database.Database, path: string, create: boolean): void {
  const tables = db
    .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
    .pluck()
    .all() as string[];
  if (tables.includes('schema_version') || (create && tables.length === 0)) return;
  const holds =
    tables.length === 0 ? 'it is empty' : `it holds other tables (${tables.join(', ')})`;
  throw new WaymarkError('STORE_CORRUPT', `${path} is not a waymark database: ${holds}`, {
    retryable: false,
    details: { path, reason: 'not-waymark' },
  });
}

function cannotOpen(path: string, reason: string, message: string, cause?: unknown): WaymarkError {
  return new WaymarkError('STORE_UNAVAILABLE', message, {
    retryable: false,
    details: { path, reason },
    ...(cause !== undefined && { cause }),
  });
}

/** A file SQLite cannot open as a database is reported as corrupt; other errors pass through. */
// SQLite result codes that say the database cannot be used right now, not that a row is bad.
const unusable = /^SQLITE_(BUSY|LOCKED|FULL|READONLY|IOERR|CANTOPEN|PERM)/;

/**
 * A driver error that means the store cannot be reached (locked by another writer past the busy
 * timeout, disk full, read-only, I/O error) as STORE_UNAVAILABLE; anything else as it is.
 * Nothing was written: the transaction rolled back.
 */
function unavailable(path: string, error: unknown): unknown {
  const code = (error as { code?: unknown }).code;
  if (typeof code !== 'string' || !unusable.test(code)) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new WaymarkError('STORE_UNAVAILABLE', `${path}: ${message} (${code})`, {
    // Another writer's lock passes; a full disk or a read-only file does not, by itself.
    retryable: code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED'),
    details: { path, sqlite: code },
    cause: error,
  });
}

function unreadableFile(path: string, error: unknown): unknown {
  const code = (error as { code?: unknown }).code;
  if (code !== 'SQLITE_NOTADB' && code !== 'SQLITE_CORRUPT') return error;
  return new WaymarkError('STORE_CORRUPT', `${path} is not a waymark database`, {
    retryable: false,
    details: { path, reason: 'not-waymark' },
    cause: error,
  });
}
