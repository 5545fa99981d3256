// Concurrency limits on SQLite (limits.ts): one row per limited run. A run is admitted in the
// transaction that creates it (BEGIN IMMEDIATE: one writer at a time, so two processes never
// both take the last slot); the triggers below follow its head's status in every transaction
// that changes it (a commit, a failed run), free its slot and hand the freed slots to the
// oldest queued runs of its key, each with a wake-up in its inbox. A file with no limited run
// pays one read of an empty table per commit.

import type Database from 'better-sqlite3';
import type { QueuedFilter, RunLimitRecord } from '../limits.js';
import type { NewRun, StoredStatus } from '../store.js';

/** The migration that adds the limits' table and triggers. */
export const sqliteLimitsMigration = `
  CREATE TABLE limit_runs (
    n INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id TEXT NOT NULL UNIQUE,
    graph TEXT NOT NULL,
    limit_key TEXT NOT NULL,
    concurrency INTEGER NOT NULL,
    state TEXT NOT NULL,
    since REAL NOT NULL
  );
  CREATE INDEX limit_runs_by_key ON limit_runs (graph, limit_key, state, n);
  CREATE TRIGGER limit_head AFTER INSERT ON events
    WHEN NEW.status IS NOT NULL AND EXISTS (SELECT 1 FROM limit_runs) BEGIN
    UPDATE limit_runs SET state = 'active', since = NEW.at
      WHERE NEW.status = 'running' AND state <> 'active'
        AND run_id = (SELECT id FROM runs WHERE num = NEW.key >> 32);
    UPDATE limit_runs SET state = 'idle', since = NEW.at
      WHERE NEW.status <> 'running' AND state = 'active'
        AND run_id = (SELECT id FROM runs WHERE num = NEW.key >> 32);
    UPDATE limit_runs SET state = 'idle', since = NEW.at
      WHERE NEW.status NOT IN ('running', 'waiting') AND state = 'queued'
        AND run_id = (SELECT id FROM runs WHERE num = NEW.key >> 32);
  END;
  CREATE TRIGGER limit_failed AFTER UPDATE OF status ON events
    WHEN NEW.status IS NOT NULL AND NEW.status <> 'running' AND EXISTS (SELECT 1 FROM limit_runs)
    BEGIN
    UPDATE limit_runs SET state = 'idle', since = NEW.at
      WHERE state <> 'idle' AND run_id = (SELECT id FROM runs WHERE num = NEW.key >> 32);
  END;
  CREATE TRIGGER limit_freed AFTER UPDATE OF state ON limit_runs
    WHEN OLD.state = 'active' AND NEW.state <> 'active' BEGIN
    INSERT INTO inbox (run_id, attempt, at)
      SELECT run_id, NULL, NEW.since FROM limit_runs
      WHERE graph = NEW.graph AND limit_key = NEW.limit_key AND state = 'queued'
      ORDER BY n
      LIMIT max(0, NEW.concurrency - (SELECT count(*) FROM limit_runs
        WHERE graph = NEW.graph AND limit_key = NEW.limit_key AND state = 'active'));
    UPDATE limit_runs SET state = 'active', since = NEW.since WHERE n IN (
      SELECT n FROM limit_runs
      WHERE graph = NEW.graph AND limit_key = NEW.limit_key AND state = 'queued'
      ORDER BY n
      LIMIT max(0, NEW.concurrency - (SELECT count(*) FROM limit_runs
        WHERE graph = NEW.graph AND limit_key = NEW.limit_key AND state = 'active')));
  END;
`;

const columns = 'run_id, graph, limit_key, concurrency, state, since';

const statements = {
  load: `SELECT coalesce(sum(state = 'active'), 0) AS active,
      coalesce(sum(state = 'queued'), 0) AS queued
    FROM limit_runs WHERE graph = ? AND limit_key = ?`,
  insert: `INSERT INTO limit_runs (${columns}) VALUES (?, ?, ?, ?, ?, ?)`,
  get: `SELECT ${columns} FROM limit_runs WHERE run_id = ?`,
  queued: `SELECT ${columns} FROM limit_runs
    WHERE state = 'queued' AND (@graph IS NULL OR graph = @graph)
      AND (@key IS NULL OR limit_key = @key)
    ORDER BY n LIMIT @limit`,
  active: `SELECT count(*) AS n FROM limit_runs
    WHERE graph = ? AND limit_key = ? AND state = 'active'`,
} as const;

interface Row {
  run_id: string;
  graph: string;
  limit_key: string;
  concurrency: number;
  state: RunLimitRecord['state'];
  since: number;
}

export class SqliteLimits {
  readonly #sql: { readonly [K in keyof typeof statements]: Database.Statement };

  constructor(db: Database.Database) {
    this.#sql = Object.fromEntries(
      Object.entries(statements).map(([name, sql]) => [name, db.prepare(sql)]),
    ) as never;
  }

  /**
   * Admits a new run inside the caller's write transaction, before its head is written: the
   * status to record it with (as given, or `waiting` when it is queued).
   */
  admit(run: NewRun): StoredStatus {
    const limit = run.limit;
    if (limit === undefined) return run.status;
    const load = this.#sql.load.get(run.graph, limit.key) as { active: number; queued: number };
    const free = load.active < limit.concurrency && load.queued === 0;
    const state = free ? 'active' : 'queued';
    this.#sql.insert.run(run.id, run.graph, limit.key, limit.concurrency, state, run.createdAt);
    return free ? run.status : 'waiting';
  }

  runLimit(runId: string): RunLimitRecord | undefined {
    const row = this.#sql.get.get(runId) as Row | undefined;
    return row === undefined ? undefined : recordOf(row);
  }

  listQueued(filter: QueuedFilter = {}): RunLimitRecord[] {
    const rows = this.#sql.queued.all({
      graph: filter.graph ?? null,
      key: filter.key ?? null,
      limit: filter.limit ?? -1,
    }) as Row[];
    return rows.map(recordOf);
  }

  activeCount(graph: string, key: string): number {
    return (this.#sql.active.get(graph, key) as { n: number }).n;
  }
}

function recordOf(row: Row): RunLimitRecord {
  return {
    runId: row.run_id,
    graph: row.graph,
    key: row.limit_key,
    concurrency: row.concurrency,
    state: row.state,
    since: row.since,
  };
}
