import type { Row } from './rows.js';

// The SQL of the SQLite store: one statement per operation, prepared once per connection. It
// depends on the schema's views and triggers (schema.ts, migration 3 and 4): a step is one
// INSERT into the commits view.

/** The message the commit trigger (schema migration 3) aborts with when it refuses a commit. */
export const refusedMessage = 'waymark: commit refused';

/** The message the commit trigger (schema migration 4) aborts with when a commit's epoch is stale. */
export const leaseLostMessage = 'waymark: lease lost';

// A run row with its head, the newest row of its history that holds a status (normally its
// last row): the columns a RunRecord is read from.
const runColumns = `runs.id, runs.graph, runs.graph_hash, runs.graph_version, runs.state_version,
    runs.format, runs.created_at, runs.labels,
    head.key & 4294967295 AS seq, head.status, head.error, head.at AS updated_at,
    leases.owner AS lease_owner, leases.host AS lease_host, leases.pid AS lease_pid,
    leases.epoch AS lease_epoch, leases.expires_at AS lease_expires_at
  FROM runs LEFT JOIN leases ON leases.num = runs.num
  LEFT JOIN events AS head ON head.key = (
    SELECT key FROM events
    WHERE key BETWEEN runs.num << 32 AND (runs.num << 32) + 4294967295 AND status IS NOT NULL
    ORDER BY key DESC LIMIT 1)`;

// Statements are prepared once per connection; a method runs one of them (SQLite makes it its
// own transaction) or a few in one transaction. better-sqlite3 is synchronous, so a transaction
// never spans an await.
export const statements = {
  // Inside the write transaction, so two processes never take the same number; past every
  // number a deleted run had (run_numbers), so none is handed out twice.
  insertRun: `INSERT INTO runs (id, graph, graph_hash, graph_version, state_version, format,
      created_at, labels, num)
    VALUES (@id, @graph, @graphHash, @graphVersion, @stateVersion, @format, @createdAt, @labels,
      (SELECT max(coalesce(max(num), 0), coalesce((SELECT highest FROM run_numbers), 0)) + 1
        FROM runs))
    ON CONFLICT (id) DO NOTHING
    RETURNING num`,
  insertHead: `INSERT INTO events (key, at, status) VALUES (@num << 32, @createdAt, @status)`,
  getRun: `SELECT ${runColumns} WHERE runs.id = ?`,
  runNumber: 'SELECT num FROM runs WHERE id = ?',
  // One statement per step: the trigger behind the view moves the head and appends the event.
  // Positional parameters: binding them is measurably cheaper than by name, on every step.
  insertCommit: `INSERT INTO commits (num, seq, at, event, trace, status, error, epoch)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
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
      AND (@labels IS NULL OR NOT EXISTS (
        SELECT 1 FROM json_each(@labels) AS want WHERE NOT EXISTS (
          SELECT 1 FROM json_each(CASE WHEN json_valid(runs.labels) THEN runs.labels END) AS have
          WHERE have.key = want.key AND have.value = want.value)))
      AND (@beforeAt IS NULL OR runs.created_at < @beforeAt
        OR (runs.created_at = @beforeAt AND runs.id < @beforeId))
      AND (@since IS NULL OR runs.created_at >= @since)
      AND (@until IS NULL OR runs.created_at < @until)
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
  listEffects: 'SELECT * FROM effects WHERE run_id = ? ORDER BY at, key',
  insertWait: `INSERT INTO waits (run_id, request_id, node, activation, request, opened_at, answer,
      answered_by, answered_at, closed_at)
    VALUES (@runId, @requestId, @node, @activation, @request, @openedAt, @answer, @answeredBy,
      @answeredAt, @closedAt)
    ON CONFLICT (run_id, request_id) DO NOTHING`,
  // One conditional UPDATE: of two answers racing, only one finds `answer IS NULL`.
  answerWait: `UPDATE waits SET answer = @answer, answered_by = @by, answered_at = @at
    WHERE run_id = @runId AND request_id = @requestId AND answer IS NULL AND closed_at IS NULL
    RETURNING *`,
  closeWait: `UPDATE waits SET closed_at = ?
    WHERE run_id = ? AND request_id = ? AND answer IS NULL AND closed_at IS NULL`,
  getWait: 'SELECT * FROM waits WHERE run_id = ? AND request_id = ?',
  listWaits: `SELECT * FROM waits
    WHERE run_id = @runId AND (@open IS NULL OR (answer IS NULL AND closed_at IS NULL) = @open)
    ORDER BY opened_at, rowid`,
  getLease: 'SELECT owner, host, pid, epoch, expires_at FROM leases WHERE num = ?',
  putLease: `INSERT INTO leases (num, owner, host, pid, epoch, expires_at) VALUES (?, ?, ?, ?, ?, ?)
    ON CONFLICT (num) DO UPDATE SET owner = excluded.owner, host = excluded.host,
      pid = excluded.pid, epoch = excluded.epoch, expires_at = excluded.expires_at`,
  // Fenced like a commit: only the lease's own owner at its own epoch extends or gives it up.
  // A lease given up (expires_at 0) stays given up: a renewal racing the last commit cannot
  // take it back.
  renewLease: `UPDATE leases SET expires_at = ?
    WHERE num = (SELECT num FROM runs WHERE id = ?) AND epoch = ? AND owner = ? AND expires_at > 0`,
  releaseLeaseAt: 'UPDATE leases SET expires_at = 0 WHERE num = ? AND epoch = ?',
  releaseLease: `UPDATE leases SET expires_at = 0
    WHERE num = (SELECT num FROM runs WHERE id = ?) AND epoch = ? AND owner = ?`,
  setTimer: `INSERT INTO timers (run_id, id, at) VALUES (?, ?, ?)
    ON CONFLICT (run_id, id) DO UPDATE SET at = excluded.at`,
  clearTimer: 'DELETE FROM timers WHERE run_id = ? AND id = ?',
  listTimers: 'SELECT * FROM timers WHERE run_id = ? ORDER BY at, id',
  dueTimers: 'SELECT * FROM timers WHERE at <= ? ORDER BY at, run_id, id LIMIT ?',
  nextTimer: 'SELECT min(at) AS at FROM timers WHERE at > ?',
  insertMemo: `INSERT INTO memos (graph, node, node_version, input_hash, output, run_id, activation, at)
    VALUES (@graph, @node, @nodeVersion, @inputHash, @output, @runId, @activation, @at)`,
  findMemo: `SELECT * FROM memos
    WHERE graph = ? AND node = ? AND node_version = ? AND input_hash = ?
    ORDER BY rowid DESC LIMIT 1`,
  clearMemos: 'DELETE FROM memos WHERE graph = ? AND (? IS NULL OR node = ?)',
  begin: 'BEGIN',
  // Takes the write lock at once: a read-then-write transaction never has to upgrade its lock.
  beginWrite: 'BEGIN IMMEDIATE',
  commit: 'COMMIT',
  rollback: 'ROLLBACK',
} as const;

/** A leases row with its columns named as in a run row's join (`lease_owner`, ...). */
export function prefixed(row: Row | undefined): Row {
  if (row === undefined) return {};
  return {
    lease_owner: row.owner,
    lease_host: row.host,
    lease_pid: row.pid,
    lease_epoch: row.epoch,
    lease_expires_at: row.expires_at,
  };
}
