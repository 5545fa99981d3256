import type Database from 'better-sqlite3';
import type { DeletedRun, DeleteOptions } from '../run-removal.js';
import { noSuchRun, removalRefusal } from '../run-removal.js';
import type { RunRecord } from '../store.js';

// Deleting a run from a SQLite store: every table that holds a row of a run is in `owned`, with
// the statement that deletes that run's rows (by its id, or by its number). This is the one
// list: test/store/sqlite-retention.test.ts reads the file's schema and fails on a table with a
// run column that is neither here nor in `notOwned`, so a table added later is not forgotten.
// Children first, `runs` last: their foreign keys point at it.

/** The statement per table that deletes one run's rows (`@id`, `@num`). */
export const owned = {
  events: 'DELETE FROM events WHERE key BETWEEN @num << 32 AND (@num << 32) + 4294967295',
  snapshots: 'DELETE FROM snapshots WHERE run_id = @id',
  effects: 'DELETE FROM effects WHERE run_id = @id',
  waits: 'DELETE FROM waits WHERE run_id = @id',
  memos: 'DELETE FROM memos WHERE run_id = @id',
  timers: 'DELETE FROM timers WHERE run_id = @id',
  leases: 'DELETE FROM leases WHERE num = @num',
  tasks: 'DELETE FROM tasks WHERE run_id = @id',
  inbox: 'DELETE FROM inbox WHERE run_id = @id',
  running: 'DELETE FROM running WHERE num = @num',
  run_sources: 'DELETE FROM run_sources WHERE run_id = @id',
  // A run that may be deleted is not running: its row is idle or queued and holds no slot.
  limit_runs: 'DELETE FROM limit_runs WHERE run_id = @id',
  // The signals sent to the run by id or taken by it, and its event waits; a signal kept for
  // { graph, key } that no run took yet belongs to nobody and stays until it expires.
  signals: 'DELETE FROM signals WHERE run_id = @id OR consumed_run = @id',
  signal_waits: 'DELETE FROM signal_waits WHERE run_id = @id',
  runs: 'DELETE FROM runs WHERE id = @id',
} as const;

/** Tables with a run column that no run owns, and why they keep their rows. */
export const notOwned = {
  // The highest number a deleted run had: numbers are never handed out twice (see below).
  run_numbers: 'keeps the highest number a deleted run had, so no later run is given it',
  // A schedule outlives its runs: its last run's id may name a deleted one.
  schedules: 'a schedule outlives the runs it started; last_run_id may name a deleted run',
} as const;

const sql = {
  liveTask: 'SELECT 1 FROM tasks WHERE run_id = ? AND owner IS NOT NULL AND expires_at > ? LIMIT 1',
  referrers: 'SELECT run_id FROM run_sources WHERE source = ? ORDER BY run_id',
  // A deleted run's number is retired, not freed: a process that still remembers the number by
  // the run's id (SqliteStore caches them) must find no row under it, never a later run's.
  retire: `INSERT INTO run_numbers (one, highest) VALUES (1, @num)
    ON CONFLICT (one) DO UPDATE SET highest = max(highest, excluded.highest)`,
  addSource: 'INSERT OR IGNORE INTO run_sources (run_id, source) VALUES (?, ?)',
} as const;

type Statements = { readonly [K in keyof typeof sql]: Database.Statement };

/** What the removal needs of its store: the run as read in the current transaction. */
export interface RetentionHost {
  readonly now: () => number;
  readonly run: (runId: string) => RunRecord | undefined;
  readonly number: (runId: string) => number;
}

/** The deletes of one SQLite store's connection; every call runs inside the store's write transaction. */
export class SqliteRetention {
  readonly #deletes: readonly Database.Statement[];
  readonly #sql: Statements;
  readonly #host: RetentionHost;

  constructor(db: Database.Database, host: RetentionHost) {
    this.#deletes = Object.values(owned).map((text) => db.prepare(text));
    this.#sql = Object.fromEntries(
      Object.entries(sql).map(([name, text]) => [name, db.prepare(text)]),
    ) as unknown as Statements;
    this.#host = host;
  }

  /** Records the runs a new run reads outputs from, in the transaction that creates it. */
  noteSources(runId: string, sources: readonly string[] | undefined): void {
    for (const source of sources ?? []) this.#sql.addSource.run(runId, source);
  }

  /** Checks and deletes, in the caller's write transaction: all of the run's rows, or none. */
  delete(runId: string, options: DeleteOptions | undefined): DeletedRun {
    const run = this.#host.run(runId);
    if (run === undefined) throw noSuchRun(runId);
    const now = this.#host.now();
    const referrers = (this.#sql.referrers.all(runId) as { run_id: string }[])
      .map((r) => this.#host.run(r.run_id))
      .filter((r) => r !== undefined && (r.status === 'running' || r.status === 'waiting'))
      .map((r) => r!.id);
    const refused = removalRefusal(
      {
        runId,
        status: run.status,
        leaseLive: run.lease?.live === true,
        taskLive: this.#sql.liveTask.get(runId, now) !== undefined,
        referrers,
      },
      options,
    );
    if (refused) throw refused;
    const params = { id: runId, num: this.#host.number(runId) };
    for (const statement of this.#deletes) statement.run(params);
    this.#sql.retire.run({ num: params.num });
    return { id: run.id, graph: run.graph, status: run.status, createdAt: run.createdAt };
  }
}
