import type Database from 'better-sqlite3';
import { WaymarkError } from '../../error/waymark-error.js';
import { sqliteLimitsMigration } from './sqlite-limits.js';
import { ratesMigration } from './sqlite-rates.js';
import { schedulesMigration } from './sqlite-schedules.js';

// The SQLite schema, as an ordered list of migrations. A database file records every migration
// applied to it in `schema_version`; opening a file applies the missing ones in one transaction,
// so an old file is brought forward and a half-migrated file cannot exist. Never edit a
// migration that has shipped: append a new one.
//
// Columns are NOT NULL wherever the contract has no null, so a bad write fails at once instead
// of surfacing as a corrupt row at the next load. Tables are not STRICT: a damaged value still
// loads as a row, and the row readers name it (STORE_CORRUPT) instead of SQLite refusing the file.
export const migrations: readonly string[] = [
  // 1: runs, their history (events, snapshots), effects, waits and memos.
  `
  CREATE TABLE runs (
    id TEXT NOT NULL PRIMARY KEY,
    graph TEXT NOT NULL,
    graph_hash TEXT NOT NULL,
    graph_version INTEGER NOT NULL,
    state_version INTEGER NOT NULL,
    format INTEGER NOT NULL,
    status TEXT NOT NULL,
    seq INTEGER NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    error TEXT
  );
  CREATE INDEX runs_newest ON runs (created_at DESC, id DESC);
  CREATE INDEX runs_by_graph ON runs (graph, created_at DESC, id DESC);

  CREATE TABLE events (
    run_id TEXT NOT NULL REFERENCES runs (id),
    seq INTEGER NOT NULL,
    at INTEGER NOT NULL,
    event TEXT NOT NULL,
    trace TEXT,
    PRIMARY KEY (run_id, seq)
  );

  CREATE TABLE snapshots (
    run_id TEXT NOT NULL REFERENCES runs (id),
    seq INTEGER NOT NULL,
    data TEXT NOT NULL,
    PRIMARY KEY (run_id, seq)
  );

  CREATE TABLE effects (
    run_id TEXT NOT NULL REFERENCES runs (id),
    key TEXT NOT NULL,
    result TEXT NOT NULL,
    at INTEGER NOT NULL,
    PRIMARY KEY (run_id, key)
  );

  CREATE TABLE waits (
    run_id TEXT NOT NULL REFERENCES runs (id),
    request_id TEXT NOT NULL,
    node TEXT NOT NULL,
    activation TEXT NOT NULL,
    request TEXT NOT NULL,
    opened_at INTEGER NOT NULL,
    answer TEXT,
    answered_by TEXT,
    answered_at INTEGER,
    PRIMARY KEY (run_id, request_id)
  );

  -- A memo outlives its run's purpose (a later run of an edited graph reads it back), so it has
  -- no foreign key; rowid order is recording order, and the newest match wins.
  CREATE TABLE memos (
    graph TEXT NOT NULL,
    node TEXT NOT NULL,
    node_version INTEGER NOT NULL,
    input_hash TEXT NOT NULL,
    output TEXT NOT NULL,
    run_id TEXT NOT NULL,
    activation TEXT NOT NULL,
    at INTEGER NOT NULL
  );
  CREATE INDEX memos_by_input ON memos (graph, node, node_version, input_hash);
  `,
  // 2: labels on a run (JSON object of strings): what started it, e.g. the CLI's graph file.
  `
  ALTER TABLE runs ADD COLUMN labels TEXT;
  `,
  // 3: about one B-tree page per step. A step used to write three pages: the run row (seq,
  // status), the event row and the event's (run_id, seq) index entry. Now each run has a number,
  // and its history is keyed by one integer, (num << 32) + seq: row 0 is written when the run is
  // created, row n by commit n. The newest row is the run's head: it alone holds the run's
  // status and error, and its key and time are the run's seq and last commit time. A commit
  // clears the head's status and appends the next row, which usually share a leaf page; for the
  // newest run in the file the append is at the end of the table, where SQLite splits a full
  // page cheaply. The runs row keeps what never changes after the start. See
  // docs/performance.md, "About one page per step".
  `
  ALTER TABLE runs ADD COLUMN num INTEGER;
  UPDATE runs SET num = rowid;
  CREATE UNIQUE INDEX runs_by_num ON runs (num);

  CREATE TABLE history (
    key INTEGER PRIMARY KEY,
    at INTEGER NOT NULL,
    -- The event's JSON and the trace entries it ended; NULL in row 0, which has no event.
    event TEXT,
    trace TEXT,
    -- On the head row only: the run's status, and the error it stopped with.
    status TEXT,
    error TEXT,
    CONSTRAINT event_in_every_row_but_the_first CHECK (((key & 4294967295) = 0) = (event IS NULL))
  );
  INSERT INTO history (key, at, status, error)
    SELECT num << 32, created_at,
      CASE WHEN seq = 0 THEN status END, CASE WHEN seq = 0 THEN error END
    FROM runs;
  -- A damaged seq cannot become a key; leaving the row out shows at load as a gap in that run.
  -- A run whose newest events were lost gets no head, which its load reports.
  INSERT INTO history (key, at, event, trace, status, error)
    SELECT (runs.num << 32) + events.seq, events.at, events.event, events.trace,
      CASE WHEN events.seq = runs.seq THEN runs.status END,
      CASE WHEN events.seq = runs.seq THEN runs.error END
    FROM events JOIN runs ON runs.id = events.run_id
    WHERE typeof(events.seq) = 'integer' AND events.seq BETWEEN 1 AND 4294967295;
  DROP TABLE events;
  ALTER TABLE history RENAME TO events;
  ALTER TABLE runs DROP COLUMN seq;
  ALTER TABLE runs DROP COLUMN status;
  ALTER TABLE runs DROP COLUMN error;
  ALTER TABLE runs DROP COLUMN updated_at;

  -- A commit is one INSERT into this view: one statement, one implicit transaction per step.
  -- Clearing the head's status is the fence: of two connections committing the same seq, one
  -- finds row seq - 1 still the head. A head whose status is not one of the contract's is
  -- damaged and is never written over. A refused commit aborts with the message the store
  -- recognises, and writes nothing.
  CREATE VIEW commits (num, seq, at, event, trace, status, error) AS
    SELECT NULL, NULL, NULL, NULL, NULL, NULL, NULL WHERE 0;
  CREATE TRIGGER commits_append INSTEAD OF INSERT ON commits BEGIN
    UPDATE events SET status = NULL, error = NULL
      WHERE key = (NEW.num << 32) + NEW.seq - 1 AND NEW.seq BETWEEN 1 AND 4294967295
        AND status IN ('running', 'waiting', 'succeeded', 'failed', 'cancelled', 'timed_out');
    SELECT RAISE(ABORT, 'waymark: commit refused') WHERE changes() = 0;
    INSERT INTO events (key, at, event, trace, status, error)
      VALUES ((NEW.num << 32) + NEW.seq, NEW.at, NEW.event, NEW.trace, NEW.status, NEW.error);
  END;
  `,
  // 4: one owner per run, waits closed unanswered, timers. A lease row per run (by its number)
  // holds the owner, its host and pid, the epoch and the expiry; the commit trigger refuses a
  // commit made under another epoch than the lease's (a NULL epoch is a commit any process may
  // make, fenced by seq alone: a cancellation). The check is a read of one row; a renewal, not a
  // step, writes it. Timers (a wait's timeout, the run's deadline) are rows a commit sets and
  // clears, listed by when they are due.
  `
  CREATE TABLE leases (
    num INTEGER PRIMARY KEY,
    owner TEXT NOT NULL,
    host TEXT,
    pid INTEGER,
    epoch INTEGER NOT NULL,
    expires_at INTEGER NOT NULL
  );
  ALTER TABLE waits ADD COLUMN closed_at INTEGER;
  CREATE TABLE timers (
    run_id TEXT NOT NULL REFERENCES runs (id),
    id TEXT NOT NULL,
    at INTEGER NOT NULL,
    PRIMARY KEY (run_id, id)
  );
  CREATE INDEX timers_due ON timers (at);

  DROP TRIGGER commits_append;
  DROP VIEW commits;
  CREATE VIEW commits (num, seq, at, event, trace, status, error, epoch) AS
    SELECT NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL WHERE 0;
  CREATE TRIGGER commits_append INSTEAD OF INSERT ON commits BEGIN
    SELECT RAISE(ABORT, 'waymark: lease lost')
      WHERE NEW.epoch IS NOT NULL
        AND NEW.epoch IS NOT (SELECT epoch FROM leases WHERE num = NEW.num);
    UPDATE events SET status = NULL, error = NULL
      WHERE key = (NEW.num << 32) + NEW.seq - 1 AND NEW.seq BETWEEN 1 AND 4294967295
        AND status IN ('running', 'waiting', 'succeeded', 'failed', 'cancelled', 'timed_out');
    SELECT RAISE(ABORT, 'waymark: commit refused') WHERE changes() = 0;
    INSERT INTO events (key, at, event, trace, status, error)
      VALUES ((NEW.num << 32) + NEW.seq, NEW.at, NEW.event, NEW.trace, NEW.status, NEW.error);
  END;
  `,
  // 5: the work queue (work-queue.ts), so that `waymark worker` processes on one machine share
  // the file: tasks a commit schedules (each under a lease epoch that fences its result), each
  // run's inbox of results and wake-ups, and the registry of workers. Claims take their rows in
  // BEGIN IMMEDIATE transactions, one writer at a time; leases expire by the store's clock.
  `
  CREATE TABLE tasks (
    run_id TEXT NOT NULL,
    activation TEXT NOT NULL,
    attempt INTEGER NOT NULL,
    node TEXT NOT NULL,
    graph TEXT NOT NULL,
    graph_hash TEXT NOT NULL,
    not_before INTEGER,
    input TEXT NOT NULL,
    owner TEXT,
    epoch INTEGER NOT NULL DEFAULT 0,
    expires_at INTEGER NOT NULL DEFAULT 0,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (run_id, activation)
  );
  CREATE INDEX tasks_claimable ON tasks (graph, graph_hash, expires_at);
  CREATE TABLE inbox (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id TEXT NOT NULL,
    attempt TEXT,
    at REAL NOT NULL
  );
  CREATE INDEX inbox_by_run ON inbox (run_id, id);
  CREATE TABLE workers (
    id TEXT NOT NULL PRIMARY KEY,
    host TEXT NOT NULL,
    pid INTEGER NOT NULL,
    graphs TEXT NOT NULL,
    expires_at INTEGER NOT NULL
  );
  `,
  // 6: the count of a run's failed folds, on its lease row, so that a run nobody can fold fails
  // after a few (WorkQueue.foldFailed).
  `
  ALTER TABLE leases ADD COLUMN fold_failures INTEGER NOT NULL DEFAULT 0;
  `,
  // 7: the memory items kept across runs (sqlite-items.ts), by namespace (encoded as items.ts
  // says) and key; no foreign key, since an item outlives the run that wrote it. The partial
  // index finds the expired ones a put sweeps.
  `
  CREATE TABLE items (
    ns TEXT NOT NULL,
    key TEXT NOT NULL,
    value TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    expires_at INTEGER,
    PRIMARY KEY (ns, key)
  );
  CREATE INDEX items_expiring ON items (expires_at) WHERE expires_at IS NOT NULL;
  `,
  // 8: the runs whose head is running, by number, so that a claim finds what it may fold
  // without reading every run in the file: it walks these, and reaches a waiting run only
  // through its inbox or a due timer (sqlite-queue-sql.ts). Before, each claim read the head
  // of every run of its graphs, finished and asleep alike: 15 ms with 10,000 runs asleep.
  // A commit that leaves a run running finds its row present and writes no page for it.
  `
  CREATE TABLE running (num INTEGER PRIMARY KEY);
  INSERT INTO running (num) SELECT key >> 32 FROM events WHERE status = 'running';
  CREATE TRIGGER running_started AFTER INSERT ON events
    WHEN (NEW.key & 4294967295) = 0 AND NEW.status = 'running' BEGIN
    INSERT OR IGNORE INTO running (num) VALUES (NEW.key >> 32);
  END;
  CREATE TRIGGER running_failed AFTER UPDATE OF status ON events
    WHEN NEW.status IS NOT NULL AND NEW.status <> 'running' BEGIN
    DELETE FROM running WHERE num = NEW.key >> 32;
  END;
  DROP TRIGGER commits_append;
  CREATE TRIGGER commits_append INSTEAD OF INSERT ON commits BEGIN
    SELECT RAISE(ABORT, 'waymark: lease lost')
      WHERE NEW.epoch IS NOT NULL
        AND NEW.epoch IS NOT (SELECT epoch FROM leases WHERE num = NEW.num);
    UPDATE events SET status = NULL, error = NULL
      WHERE key = (NEW.num << 32) + NEW.seq - 1 AND NEW.seq BETWEEN 1 AND 4294967295
        AND status IN ('running', 'waiting', 'succeeded', 'failed', 'cancelled', 'timed_out');
    SELECT RAISE(ABORT, 'waymark: commit refused') WHERE changes() = 0;
    INSERT INTO events (key, at, event, trace, status, error)
      VALUES ((NEW.num << 32) + NEW.seq, NEW.at, NEW.event, NEW.trace, NEW.status, NEW.error);
    DELETE FROM running WHERE num = NEW.num AND NEW.status IS NOT 'running';
    INSERT OR IGNORE INTO running (num) SELECT NEW.num WHERE NEW.status = 'running';
  END;
  `,
  // 9: concurrency limits per graph and key (sqlite-limits.ts): a row per limited run, and the
  // triggers that free and hand on its slot as its head's status changes.
  sqliteLimitsMigration,
  // 10: schedules (sqlite-schedules.ts): a tick is taken by a conditional update of its row.
  schedulesMigration,
  // 11: signals for event nodes (issue 32 part 3): kept until an event wait takes one, and the
  // open event waits that asked for one, so a signal to { graph, key } finds its run.
  `
  CREATE TABLE signals (
    id TEXT NOT NULL PRIMARY KEY,
    graph TEXT NOT NULL,
    run_id TEXT,
    key TEXT,
    name TEXT NOT NULL,
    payload TEXT NOT NULL,
    sent_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    consumed_run TEXT,
    consumed_wait TEXT,
    consumed_at INTEGER
  );
  CREATE INDEX signals_kept ON signals (graph, name, sent_at) WHERE consumed_at IS NULL;
  CREATE INDEX signals_by_run ON signals (run_id) WHERE run_id IS NOT NULL;
  CREATE INDEX signals_by_taker ON signals (consumed_run) WHERE consumed_run IS NOT NULL;
  CREATE TABLE signal_waits (
    run_id TEXT NOT NULL,
    request_id TEXT NOT NULL,
    graph TEXT NOT NULL,
    name TEXT NOT NULL,
    key TEXT,
    PRIMARY KEY (run_id, request_id)
  );
  CREATE INDEX signal_waits_by_key ON signal_waits (graph, name, key);
  `,
  // 12: retention: the runs a run reads recorded outputs from (reuseFrom, a rewind's source),
  // so that deleting one of those is refused while the run reading it goes on; and the highest
  // number a deleted run had, so a deleted run's number is never handed out again
  // (sqlite-retention.ts). Deleting runs needs nothing else of the schema: every table holding
  // rows of a run is keyed by its id or its number.
  `
  CREATE TABLE run_sources (
    run_id TEXT NOT NULL,
    source TEXT NOT NULL,
    PRIMARY KEY (run_id, source)
  );
  CREATE INDEX run_sources_by_source ON run_sources (source);
  CREATE TABLE run_numbers (
    one INTEGER PRIMARY KEY CHECK (one = 1),
    highest INTEGER NOT NULL
  );
  `,
  // 13: rate limits on shared resources: admissions in a resource's last minute, and the
  // blocks of a 429 (sqlite-rates.ts). They belong to no run.
  ratesMigration,
];

/** The schema version this code writes: the number of migrations. */
export const schemaVersion = migrations.length;

/**
 * Brings the database to {@link schemaVersion}, or refuses a file made by a newer waymark.
 * Runs under BEGIN IMMEDIATE, so two processes opening a new file at once migrate it once.
 *
 * @example
 * migrate(db, Date.now());
 */
export function migrate(db: Database.Database, now: number): void {
  db.transaction(() => {
    db.exec(
      'CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL PRIMARY KEY, applied_at INTEGER NOT NULL)',
    );
    const row = db.prepare('SELECT max(version) AS version FROM schema_version').get() as {
      version: number | null;
    };
    const current = row.version ?? 0;
    if (current > schemaVersion) {
      throw new WaymarkError(
        'STORE_VERSION_UNSUPPORTED',
        `database schema version ${current} is newer than this waymark (${schemaVersion}): ${db.name}`,
        {
          retryable: false,
          details: { path: db.name, schemaVersion: current, supported: schemaVersion },
        },
      );
    }
    const record = db.prepare('INSERT INTO schema_version (version, applied_at) VALUES (?, ?)');
    for (let version = current + 1; version <= schemaVersion; version++) {
      db.exec(migrations[version - 1]!);
      record.run(version, now);
    }
  }).immediate();
}
