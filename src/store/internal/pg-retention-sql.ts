// Deleting a run from a PostgreSQL store: every table that holds a row of a run is in
// `pgOwned`, with the statement that deletes that run's rows ($1: its id). This is the one
// list: test/store/postgres-retention.test.ts reads information_schema and fails on a table
// with a run column that is neither here nor in `pgNotOwned`. Children first, `runs` last:
// foreign keys point at it.

/** The statement per table that deletes one run's rows, given the quoted schema. */
export const pgOwned = {
  events: (s: string) => `DELETE FROM ${s}.events WHERE run_id = $1`,
  snapshots: (s: string) => `DELETE FROM ${s}.snapshots WHERE run_id = $1`,
  effects: (s: string) => `DELETE FROM ${s}.effects WHERE run_id = $1`,
  waits: (s: string) => `DELETE FROM ${s}.waits WHERE run_id = $1`,
  timers: (s: string) => `DELETE FROM ${s}.timers WHERE run_id = $1`,
  memos: (s: string) => `DELETE FROM ${s}.memos WHERE run_id = $1`,
  tasks: (s: string) => `DELETE FROM ${s}.tasks WHERE run_id = $1`,
  inbox: (s: string) => `DELETE FROM ${s}.inbox WHERE run_id = $1`,
  watched: (s: string) => `DELETE FROM ${s}.watched WHERE run_id = $1`,
  run_sources: (s: string) => `DELETE FROM ${s}.run_sources WHERE run_id = $1`,
  // A run that may be deleted is not running: its row is idle or queued and holds no slot.
  limit_runs: (s: string) => `DELETE FROM ${s}.limit_runs WHERE run_id = $1`,
  // The signals sent to the run by id or taken by it, and its event waits; a signal kept for
  // { graph, key } that no run took yet belongs to nobody and stays until it expires.
  signals: (s: string) => `DELETE FROM ${s}.signals WHERE run_id = $1 OR consumed_run = $1`,
  signal_waits: (s: string) => `DELETE FROM ${s}.signal_waits WHERE run_id = $1`,
  runs: (s: string) => `DELETE FROM ${s}.runs WHERE id = $1`,
} as const;

/** Tables with a run column that no run owns, and why (a run's lease is on its row). */
export const pgNotOwned: Readonly<Record<string, string>> = {
  schedules: 'a schedule outlives the runs it started; last_run_id may name a deleted run',
};

const nowMs = 'floor(extract(epoch FROM statement_timestamp()) * 1000)::bigint';

/** The statements of a delete, in its transaction, given the quoted schema. */
export function retentionTexts(s: string) {
  return {
    // The row lock is what every commit, claim and lease takes too: once it is held, nothing
    // else changes the run, and each later statement (READ COMMITTED) sees all they wrote.
    lockRun: `SELECT id, graph, status, created_at,
        coalesce(lease_expires_at > ${nowMs}, false) AS lease_live
      FROM ${s}.runs WHERE id = $1 FOR UPDATE`,
    // Locked too, so a worker cannot claim one between this check and the delete.
    liveTask: `SELECT coalesce(bool_or(owner IS NOT NULL AND expires_at > ${nowMs}), false) AS live
      FROM (SELECT owner, expires_at FROM ${s}.tasks WHERE run_id = $1 FOR UPDATE) t`,
    referrers: `SELECT r.id FROM ${s}.run_sources src JOIN ${s}.runs r ON r.id = src.run_id
      WHERE src.source = $1 AND r.status IN ('running', 'waiting') ORDER BY r.id`,
  };
}

/** Migration (retention): the runs a run reads recorded outputs from (NewRun.sources). */
export function retentionMigration(s: string): string {
  return `
  CREATE TABLE ${s}.run_sources (
    run_id text COLLATE "C" NOT NULL,
    source text COLLATE "C" NOT NULL,
    PRIMARY KEY (run_id, source)
  );
  CREATE INDEX run_sources_by_source ON ${s}.run_sources (source);
  `;
}
