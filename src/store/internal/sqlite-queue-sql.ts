// The work queue's SQL on SQLite (schema migration 5; see work-queue.ts). Every statement runs
// inside a BEGIN IMMEDIATE transaction of the store's, so of several processes sharing the file
// one claims at a time: no row is claimed twice. Times are the store's clock, passed in.

/** The graphs of a claim, as (name, hash) pairs from the JSON array `@graphs`. */
const claimedGraphs = `(SELECT json_extract(value, '$.name'), json_extract(value, '$.hash')
  FROM json_each(@graphs))`;

const taskColumns = `run_id, activation, attempt, node, graph, graph_hash, not_before, input,
  owner, epoch, expires_at`;

export const queueStatements = {
  // Runs with something to fold and no live owner: never started, an inbox item, a due timer,
  // or left running with no task queued (their in-process driver died). As PostgreSQL's, found
  // among the running runs and those an inbox item or a due timer wakes: a run asleep, waiting
  // or finished is never read by a claim.
  // CROSS JOIN keeps SQLite's planner to that order: from the few woken, never from every run.
  runCandidates: `SELECT runs.id FROM (
        SELECT num FROM running
        UNION SELECT runs.num FROM inbox CROSS JOIN runs ON runs.id = inbox.run_id
        UNION SELECT runs.num FROM timers CROSS JOIN runs ON runs.id = timers.run_id
          WHERE timers.at <= @now) AS woken
    CROSS JOIN runs ON runs.num = woken.num
    LEFT JOIN leases ON leases.num = runs.num
    JOIN events AS head ON head.key = (
      SELECT key FROM events
      WHERE key BETWEEN runs.num << 32 AND (runs.num << 32) + 4294967295 AND status IS NOT NULL
      ORDER BY key DESC LIMIT 1)
    WHERE (runs.graph, runs.graph_hash) IN ${claimedGraphs}
      AND head.status IN ('running', 'waiting')
      AND (leases.num IS NULL OR leases.expires_at <= @now)
      AND ((head.key & 4294967295 = 0 AND head.status = 'running')
        OR EXISTS (SELECT 1 FROM inbox WHERE inbox.run_id = runs.id)
        OR EXISTS (SELECT 1 FROM timers WHERE timers.run_id = runs.id AND timers.at <= @now)
        OR (head.status = 'running'
          AND NOT EXISTS (SELECT 1 FROM tasks WHERE tasks.run_id = runs.id)))
    ORDER BY runs.created_at, runs.id
    LIMIT @limit`,
  claimTasks: `UPDATE tasks SET owner = @owner, epoch = epoch + 1, expires_at = @expiresAt
    WHERE rowid IN (
      SELECT rowid FROM tasks
      WHERE (graph, graph_hash) IN ${claimedGraphs}
        AND expires_at <= @now AND coalesce(not_before, 0) <= @now
      ORDER BY coalesce(not_before, 0), created_at, rowid
      LIMIT @limit)
    RETURNING ${taskColumns}`,
  renewTask: `UPDATE tasks SET expires_at = ?
    WHERE run_id = ? AND activation = ? AND epoch = ? AND owner = ?`,
  finishTask: `DELETE FROM tasks WHERE run_id = ? AND activation = ? AND epoch = ? AND owner = ?`,
  releaseTask: `UPDATE tasks SET owner = NULL, expires_at = 0
    WHERE run_id = ? AND activation = ? AND epoch = ? AND owner = ?`,
  listTasks: `SELECT ${taskColumns} FROM tasks WHERE run_id = ? ORDER BY created_at, activation`,
  // A retry replaces the row of its earlier attempt and bumps its epoch, fencing a worker still
  // running that one.
  scheduleTask: `INSERT INTO tasks (run_id, activation, attempt, node, graph, graph_hash,
      not_before, input, created_at)
    VALUES (@runId, @activation, @attempt, @node, @graph, @graphHash, @notBefore, @input, @now)
    ON CONFLICT (run_id, activation) DO UPDATE SET attempt = excluded.attempt,
      node = excluded.node, graph = excluded.graph, graph_hash = excluded.graph_hash,
      not_before = excluded.not_before, input = excluded.input, owner = NULL, expires_at = 0,
      epoch = tasks.epoch + 1`,
  cancelTask: 'DELETE FROM tasks WHERE run_id = ? AND activation = ?',
  arrive: 'INSERT INTO inbox (run_id, attempt, at) VALUES (?, ?, ?)',
  wake: 'INSERT INTO inbox (run_id, attempt, at) SELECT id, NULL, ? FROM runs WHERE id = ?',
  inbox: 'SELECT id, run_id, attempt, at FROM inbox WHERE run_id = ? ORDER BY id',
  consumeOne: 'DELETE FROM inbox WHERE run_id = ? AND id = ?',
  // Fenced by the run's lease, like a commit.
  consumeHeld: `DELETE FROM inbox WHERE run_id = @runId AND id = @id AND EXISTS (
      SELECT 1 FROM leases WHERE num = (SELECT num FROM runs WHERE id = @runId)
        AND epoch = @epoch AND owner = @owner)`,
  // A failed fold keeps the run's lease for its back-off, so no claim takes it before then.
  foldFailed: `UPDATE leases SET fold_failures = fold_failures + 1, expires_at = @until
    WHERE num = (SELECT num FROM runs WHERE id = @runId) AND epoch = @epoch AND owner = @owner
    RETURNING fold_failures`,
  // The head row holds the run's status (migration 3).
  failHead: `UPDATE events SET status = 'failed', error = @error
    WHERE key = (SELECT key FROM events, runs
        WHERE runs.id = @runId AND key BETWEEN runs.num << 32 AND (runs.num << 32) + 4294967295
          AND status IS NOT NULL
        ORDER BY key DESC LIMIT 1)
      AND status IN ('running', 'waiting')
      AND EXISTS (SELECT 1 FROM leases WHERE num = (SELECT num FROM runs WHERE id = @runId)
        AND epoch = @epoch AND owner = @owner)`,
  releaseFailed: `UPDATE leases SET expires_at = 0 WHERE num = (SELECT num FROM runs WHERE id = ?)`,
  dropTasks: 'DELETE FROM tasks WHERE run_id = ?',
  dropInbox: 'DELETE FROM inbox WHERE run_id = ?',
  dropTimers: 'DELETE FROM timers WHERE run_id = ?',
  registerWorker: `INSERT INTO workers (id, host, pid, graphs, expires_at) VALUES (?, ?, ?, ?, ?)
    ON CONFLICT (id) DO UPDATE SET graphs = excluded.graphs, expires_at = excluded.expires_at`,
  unregisterWorker: 'DELETE FROM workers WHERE id = ?',
  listWorkers: 'SELECT id, host, pid, graphs, expires_at FROM workers ORDER BY id',
} as const;
