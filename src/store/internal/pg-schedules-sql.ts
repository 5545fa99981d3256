// The schedules on PostgreSQL (table `schedules`), by the database's clock. A tick is taken by
// the UPDATE of changeSchedule, conditioned on the revision read: under READ COMMITTED, a
// second UPDATE of the same row waits for the first to commit, then finds the revision moved
// and updates nothing. The row is the lock; nothing else coordinates the hosts.

const nowMs = 'floor(extract(epoch FROM statement_timestamp()) * 1000)::double precision';

/** The migration that makes the table: appended to pg-schema.ts's list. */
export function schedulesMigration(s: string): string {
  return `
  CREATE TABLE IF NOT EXISTS ${s}.schedules (
    id text NOT NULL PRIMARY KEY,
    graph text NOT NULL,
    cron text NOT NULL,
    timezone text NOT NULL,
    input text NOT NULL,
    overlap text NOT NULL,
    catch_up text NOT NULL,
    paused boolean NOT NULL,
    next_at double precision,
    buffered_at double precision,
    last_tick_at double precision,
    last_run_id text,
    revision integer NOT NULL,
    created_at double precision NOT NULL,
    updated_at double precision NOT NULL
  );
  CREATE INDEX IF NOT EXISTS schedules_due ON ${s}.schedules (next_at) WHERE NOT paused;
  CREATE INDEX IF NOT EXISTS schedules_buffered ON ${s}.schedules (buffered_at)
    WHERE NOT paused AND buffered_at IS NOT NULL;`;
}

const columns = `id, graph, cron, timezone, input, overlap, catch_up, paused, next_at, buffered_at,
  last_tick_at, last_run_id, revision, created_at, updated_at`;

/** The statements of the schedules. */
export function scheduleRowTexts(s: string) {
  return {
    // $1 id, $2 graph, $3 cron, $4 timezone, $5 input, $6 overlap, $7 catch-up, $8 next at.
    putSchedule: `INSERT INTO ${s}.schedules AS t (${columns})
        VALUES ($1, $2, $3, $4, $5, $6, $7, false, $8, NULL, NULL, NULL, 1, ${nowMs}, ${nowMs})
      ON CONFLICT (id) DO UPDATE SET graph = EXCLUDED.graph, cron = EXCLUDED.cron,
        timezone = EXCLUDED.timezone, input = EXCLUDED.input, overlap = EXCLUDED.overlap,
        catch_up = EXCLUDED.catch_up, next_at = EXCLUDED.next_at,
        revision = t.revision + 1, updated_at = EXCLUDED.updated_at
      RETURNING ${columns}`,
    getSchedule: `SELECT ${columns} FROM ${s}.schedules WHERE id = $1`,
    // $1 the graphs, or null for all.
    listSchedules: `SELECT ${columns} FROM ${s}.schedules
      WHERE $1::text[] IS NULL OR graph = ANY ($1::text[]) ORDER BY id COLLATE "C"`,
    // $1 id, $2 revision, $3 next at, $4 buffered at, $5 last tick at, $6 last run id, $7 paused.
    changeSchedule: `UPDATE ${s}.schedules SET next_at = $3, buffered_at = $4,
        last_tick_at = $5, last_run_id = $6, paused = $7, revision = revision + 1,
        updated_at = ${nowMs}
      WHERE id = $1 AND revision = $2 RETURNING ${columns}`,
    removeSchedule: `DELETE FROM ${s}.schedules WHERE id = $1`,
    // $1 graphs, $2 at, $3 limit or null.
    dueSchedules: `SELECT ${columns} FROM (
        SELECT * FROM ${s}.schedules WHERE NOT paused AND next_at <= $2
        UNION SELECT * FROM ${s}.schedules WHERE NOT paused AND buffered_at IS NOT NULL) d
      WHERE graph = ANY ($1::text[])
      ORDER BY coalesce(buffered_at, next_at), id COLLATE "C" LIMIT $3`,
    // $1 graphs, $2 after.
    nextScheduleAt: `SELECT min(next_at) AS next FROM ${s}.schedules
      WHERE NOT paused AND next_at > $2 AND graph = ANY ($1::text[])`,
  };
}
