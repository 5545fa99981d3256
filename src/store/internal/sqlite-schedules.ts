import type Database from 'better-sqlite3';
import type {
  NewSchedule,
  ScheduleRecord,
  ScheduleState,
  ScheduleStore,
} from '../schedule-store.js';
import { readSchedule } from './schedule-rows.js';
import { unavailable } from './sqlite-errors.js';

// The schedules of a SQLite store (table `schedules`), by the store's clock. A tick is taken by
// the UPDATE of `change`, conditioned on the revision read: SQLite runs one writer at a time,
// so of two processes that read the same revision, the second updates no row.

/**
 * The migration that makes the table: appended to schema.ts's list. IF NOT EXISTS: a file whose
 * recorded version was set back below it (sqlite-claim.test.ts does) migrates again.
 */
export const schedulesMigration = `
  CREATE TABLE IF NOT EXISTS schedules (
    id TEXT NOT NULL PRIMARY KEY,
    graph TEXT NOT NULL,
    cron TEXT NOT NULL,
    timezone TEXT NOT NULL,
    input TEXT NOT NULL,
    overlap TEXT NOT NULL,
    catch_up TEXT NOT NULL,
    paused INTEGER NOT NULL,
    next_at INTEGER,
    buffered_at INTEGER,
    last_tick_at INTEGER,
    last_run_id TEXT,
    revision INTEGER NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
  );
  CREATE INDEX IF NOT EXISTS schedules_due ON schedules (next_at) WHERE paused = 0;
  CREATE INDEX IF NOT EXISTS schedules_buffered ON schedules (buffered_at)
    WHERE paused = 0 AND buffered_at IS NOT NULL;
`;

const columns = `id, graph, cron, timezone, input, overlap, catch_up, paused, next_at, buffered_at,
  last_tick_at, last_run_id, revision, created_at, updated_at`;

// Graphs are given as a JSON array: one statement for any number of them.
const ofGraphs = 'graph IN (SELECT value FROM json_each(:graphs))';

const sql = {
  put: `INSERT INTO schedules (${columns})
      VALUES (:id, :graph, :cron, :timezone, :input, :overlap, :catchUp, 0, :nextAt, NULL,
        NULL, NULL, 1, :now, :now)
    ON CONFLICT (id) DO UPDATE SET graph = excluded.graph, cron = excluded.cron,
      timezone = excluded.timezone, input = excluded.input, overlap = excluded.overlap,
      catch_up = excluded.catch_up, next_at = excluded.next_at,
      revision = schedules.revision + 1, updated_at = excluded.updated_at
    RETURNING ${columns}`,
  get: `SELECT ${columns} FROM schedules WHERE id = :id`,
  all: `SELECT ${columns} FROM schedules ORDER BY id`,
  ofGraphs: `SELECT ${columns} FROM schedules WHERE ${ofGraphs} ORDER BY id`,
  change: `UPDATE schedules SET next_at = :nextAt, buffered_at = :bufferedAt,
      last_tick_at = :lastTickAt, last_run_id = :lastRunId, paused = :paused,
      revision = revision + 1, updated_at = :now
    WHERE id = :id AND revision = :revision RETURNING ${columns}`,
  remove: 'DELETE FROM schedules WHERE id = :id',
  due: `SELECT ${columns} FROM (
      SELECT * FROM schedules WHERE paused = 0 AND next_at <= :at
      UNION SELECT * FROM schedules WHERE paused = 0 AND buffered_at IS NOT NULL)
    WHERE ${ofGraphs} ORDER BY coalesce(buffered_at, next_at), id LIMIT :limit`,
  next: `SELECT min(next_at) AS next FROM schedules
    WHERE paused = 0 AND next_at > :after AND ${ofGraphs}`,
} as const;

type Statements = { readonly [K in keyof typeof sql]: Database.Statement };

/** The schedules of one SQLite store's connection. */
export class SqliteSchedules implements ScheduleStore {
  readonly #db: Database.Database;
  readonly #path: string;
  readonly #now: () => number;
  #sql: Statements | undefined;

  constructor(db: Database.Database, path: string, now: () => number) {
    this.#db = db;
    this.#path = path;
    this.#now = now;
  }

  async putSchedule(s: NewSchedule): Promise<ScheduleRecord> {
    return this.#run((q) => readSchedule(q.put.get({ ...s, now: this.#now() })));
  }

  async getSchedule(id: string): Promise<ScheduleRecord | undefined> {
    return this.#run((q) => {
      const row = q.get.get({ id });
      return row === undefined ? undefined : readSchedule(row);
    });
  }

  async listSchedules(graphs?: readonly string[]): Promise<ScheduleRecord[]> {
    return this.#run((q) =>
      (graphs === undefined ? q.all.all() : q.ofGraphs.all({ graphs: JSON.stringify(graphs) })).map(
        readSchedule,
      ),
    );
  }

  async changeSchedule(
    id: string,
    revision: number,
    state: ScheduleState,
  ): Promise<ScheduleRecord | undefined> {
    return this.#run((q) => {
      const row = q.change.get({
        ...state,
        paused: state.paused ? 1 : 0,
        id,
        revision,
        now: this.#now(),
      });
      return row === undefined ? undefined : readSchedule(row);
    });
  }

  async removeSchedule(id: string): Promise<boolean> {
    return this.#run((q) => q.remove.run({ id }).changes > 0);
  }

  async dueSchedules(
    graphs: readonly string[],
    at: number,
    limit?: number,
  ): Promise<ScheduleRecord[]> {
    return this.#run((q) =>
      q.due.all({ graphs: JSON.stringify(graphs), at, limit: limit ?? -1 }).map(readSchedule),
    );
  }

  async nextScheduleAt(graphs: readonly string[], after: number): Promise<number | undefined> {
    return this.#run((q) => {
      const row = q.next.get({ graphs: JSON.stringify(graphs), after }) as { next: number | null };
      return row.next ?? undefined;
    });
  }

  #run<T>(fn: (s: Statements) => T): T {
    try {
      this.#sql ??= Object.fromEntries(
        Object.entries(sql).map(([name, text]) => [name, this.#db.prepare(text)]),
      ) as unknown as Statements;
      return fn(this.#sql);
    } catch (error) {
      throw unavailable(this.#path, error);
    }
  }
}
