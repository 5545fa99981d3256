// Watchers of a run, woken by LISTEN/NOTIFY. A commit notifies only the runs someone watches:
// NOTIFY takes a lock at commit that every notifying transaction waits for, so a worker folding
// thousands of unwatched commits must not pay it. The trigger checks a small table instead.

const nowMs = 'floor(extract(epoch FROM statement_timestamp()) * 1000)::bigint';

/**
 * The channel a store's watchers listen on: one per schema (channel names are global to the
 * database), 63 bytes at most. The payload is the id of the run that committed.
 *
 * @example
 * watchChannel('"waymark"'); // 'waymark_runs_waymark'
 */
export function watchChannel(quoted: string): string {
  return `waymark_runs_${quoted.replaceAll('"', '')}`.slice(0, 63);
}

/** The migration that adds the watched runs and the trigger that notifies their watchers. */
export function watchMigration(s: string, channel: string): string {
  return `
  CREATE TABLE ${s}.watched (
    run_id text COLLATE "C" NOT NULL,
    watcher text COLLATE "C" NOT NULL,
    expires_at bigint NOT NULL,
    PRIMARY KEY (run_id, watcher)
  );
  CREATE FUNCTION ${s}.notify_watchers() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF EXISTS (SELECT 1 FROM ${s}.watched WHERE run_id = NEW.id) THEN
        PERFORM pg_notify(TG_ARGV[0], NEW.id);
      END IF;
      RETURN NULL;
    END $$;
  CREATE TRIGGER run_committed AFTER UPDATE OF seq ON ${s}.runs
    FOR EACH ROW WHEN (NEW.seq <> OLD.seq) EXECUTE FUNCTION ${s}.notify_watchers('${channel}');
  `;
}

/** The statements of watching: a watcher's rows, kept alive while it watches. */
export function watchTexts(s: string) {
  return {
    // A watcher that died leaves rows that only cost a few notifications until they lapse; the
    // next watcher to start sweeps a bounded batch of them.
    watch: `WITH gone AS (
        DELETE FROM ${s}.watched WHERE ctid IN (
          SELECT ctid FROM ${s}.watched WHERE expires_at <= ${nowMs} LIMIT 100))
      INSERT INTO ${s}.watched (run_id, watcher, expires_at) VALUES ($1, $2, ${nowMs} + $3)
      ON CONFLICT (run_id, watcher) DO UPDATE SET expires_at = EXCLUDED.expires_at`,
    renewWatch: `UPDATE ${s}.watched SET expires_at = ${nowMs} + $2 WHERE watcher = $1`,
    unwatch: `DELETE FROM ${s}.watched WHERE run_id = $1 AND watcher = $2`,
  };
}
