// The work queue's SQL on PostgreSQL (see work-queue.ts): tasks a commit schedules, the
// per-run inbox their attempts go to, and the registry of workers. Claims take rows with
// `FOR UPDATE SKIP LOCKED` under READ COMMITTED, so concurrent workers never wait on each
// other's rows, and every lease is judged by the database's clock. A task's completion touches
// its own row and inserts an inbox row: it never writes the run's row, so a thousand branches
// finishing together do not queue on one lock.

import { storedStatuses } from '../store.js';

/** The database's clock in ms since the epoch, as the store's other statements read it. */
const nowMs = 'floor(extract(epoch FROM statement_timestamp()) * 1000)::bigint';

const statusList = storedStatuses.map((status) => `'${status}'`).join(', ');

const taskColumns = `run_id, activation, attempt, node, graph, graph_hash, not_before, input,
  owner, epoch, expires_at`;

/**
 * The runs a claim of runs takes (the `graphs` it names, $1 and $2; at most $3), as the CTEs
 * `graphs` and `candidates (cid)`, locked: runs with something to fold and no live owner.
 * Running runs are walked in claim order, oldest first, by their own index; a waiting run is
 * found only through what wakes it (an inbox item, a due timer), read by key from that list
 * (an array: a join would let the planner start from the runs), so runs asleep or waiting for
 * a person cost a claim nothing, however many there are. The woken go first: each is a
 * person's answer or a timer someone waits on, and they run out, so they cannot starve the
 * running. Locks cannot go with a UNION: each side locks its own, and what one side takes past
 * the claim's limit is free again when the claim commits.
 */
export function runCandidates(s: string): string {
  const unowned = `(r.lease_epoch IS NULL OR r.lease_expires_at <= ${nowMs})`;
  const joinGraphs = 'JOIN graphs g ON g.name = r.graph AND g.hash = r.graph_hash';
  return `graphs AS (SELECT * FROM unnest($1::text[], $2::text[]) AS g (name, hash)),
    woken AS (
      SELECT r.id AS cid FROM ${s}.runs r ${joinGraphs}
      WHERE r.id = ANY (ARRAY(SELECT DISTINCT run_id FROM ${s}.inbox
          UNION ALL SELECT run_id FROM ${s}.timers WHERE at <= ${nowMs}))
        AND r.status = 'waiting' AND ${unowned}
      LIMIT $3
      FOR UPDATE OF r SKIP LOCKED),
    running AS (
      SELECT r.id AS cid FROM ${s}.runs r ${joinGraphs}
      WHERE r.status = 'running' AND ${unowned}
        AND (r.seq = 0
          OR EXISTS (SELECT FROM ${s}.inbox i WHERE i.run_id = r.id)
          OR EXISTS (SELECT FROM ${s}.timers t WHERE t.run_id = r.id AND t.at <= ${nowMs})
          OR NOT EXISTS (SELECT FROM ${s}.tasks k WHERE k.run_id = r.id))
      ORDER BY r.created_at, r.id
      LIMIT $3
      FOR UPDATE OF r SKIP LOCKED),
    candidates AS (SELECT cid FROM woken UNION ALL SELECT cid FROM running LIMIT $3)`;
}

/**
 * The queue's statements for the quoted schema `s`.
 *
 * @example
 * const q = queueTexts('"waymark"'); await pool.query(q.claimTasks, values);
 */
export function queueTexts(s: string) {
  const channel = workChannel(s);
  const graphs = 'graphs AS (SELECT * FROM unnest($1::text[], $2::text[]) AS g (name, hash))';
  return {
    claimTasks: `WITH ${graphs},
      picked AS (
        SELECT t.run_id, t.activation FROM ${s}.tasks t
        JOIN graphs g ON g.name = t.graph AND g.hash = t.graph_hash
        WHERE t.expires_at <= ${nowMs} AND coalesce(t.not_before, 0) <= ${nowMs}
        ORDER BY coalesce(t.not_before, 0), t.created_at
        LIMIT $3
        FOR UPDATE OF t SKIP LOCKED)
      UPDATE ${s}.tasks t SET owner = $4, epoch = t.epoch + 1,
        expires_at = ${nowMs} + ceil($5::double precision)::bigint
      FROM picked p WHERE t.run_id = p.run_id AND t.activation = p.activation
      RETURNING ${taskColumns.replaceAll(/(\w+)/g, 't.$1')}`,
    renewTasks: `UPDATE ${s}.tasks t SET expires_at = ${nowMs} + ceil($5::double precision)::bigint
      FROM unnest($1::text[], $2::text[], $3::bigint[]) AS l (run_id, activation, epoch)
      WHERE t.run_id = l.run_id AND t.activation = l.activation AND t.epoch = l.epoch
        AND t.owner = $4
      RETURNING t.run_id, t.activation, t.expires_at`,
    // Fenced by the task's lease: the row goes, and the attempt arrives, or neither.
    // Many tasks' results at once (those of one worker that ended together), each fenced by
    // its own lease; what comes back is the position of each one that held. The inbox takes
    // them in the order given. $7: whether idle workers are woken to fold them (once, and only
    // if one held: the subquery runs when the first row is read).
    finishTasks: `WITH given AS (
        SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::text[], $5::text[],
          $6::double precision[]) WITH ORDINALITY AS g (run_id, activation, epoch, owner, attempt, at, n)),
      gone AS (
        DELETE FROM ${s}.tasks t USING given g
        WHERE t.run_id = g.run_id AND t.activation = g.activation AND t.epoch = g.epoch
          AND t.owner = g.owner
        RETURNING g.n, g.run_id, g.attempt, g.at),
      arrived AS (
        INSERT INTO ${s}.inbox (run_id, attempt, at) SELECT run_id, attempt, at FROM gone ORDER BY n)
      SELECT n, (SELECT pg_notify('${channel}', 'runs') WHERE $7::boolean) AS woke FROM gone`,
    releaseTask: `UPDATE ${s}.tasks SET owner = NULL, expires_at = 0
      WHERE run_id = $1 AND activation = $2 AND epoch = $3 AND owner = $4`,
    // Plain commits of many runs (commitRuns): per run, the head moves if it is where the group
    // follows and the lease is the group's, and only then its events, snapshot and consumed
    // inbox items are written. The runs whose head moved come back.
    commitRuns: `WITH given AS (
        SELECT * FROM unnest($1::text[], $2::bigint[], $3::bigint[], $4::double precision[],
          $5::text[], $6::text[], $7::bigint[], $8::boolean[], $9::text[], $10::bigint[])
          AS g (run_id, seq, steps, at, status, error, epoch, release, snapshot, snapshot_seq)),
      head AS (
        UPDATE ${s}.runs r SET seq = g.seq, updated_at = g.at, status = g.status, error = g.error,
          lease_expires_at = CASE WHEN g.release THEN 0 ELSE r.lease_expires_at END
        FROM given g
        WHERE r.id = g.run_id AND r.seq = g.seq - g.steps AND r.status IN (${statusList})
          AND (g.epoch IS NULL OR r.lease_epoch = g.epoch)
        RETURNING r.id, g.snapshot, g.snapshot_seq),
      event AS (
        INSERT INTO ${s}.events (run_id, seq, at, event, trace)
        SELECT e.run_id, e.seq, e.at, e.event, e.trace
        FROM unnest($11::text[], $12::bigint[], $13::double precision[], $14::text[], $15::text[])
          AS e (run_id, seq, at, event, trace)
        JOIN head h ON h.id = e.run_id),
      snapshot AS (
        INSERT INTO ${s}.snapshots (run_id, seq, data)
        SELECT id, snapshot_seq, snapshot FROM head WHERE snapshot IS NOT NULL),
      pruned AS (
        DELETE FROM ${s}.snapshots prior USING head h
        WHERE h.snapshot IS NOT NULL AND prior.run_id = h.id AND prior.seq > 0
          AND prior.seq < h.snapshot_seq),
      consumed AS (
        DELETE FROM ${s}.inbox i USING unnest($16::text[], $17::bigint[]) AS c (run_id, id), head h
        WHERE h.id = c.run_id AND i.run_id = c.run_id AND i.id = c.id)
      SELECT id FROM head`,
    // Many new runs, all or none: a duplicate id fails the statement (runs_pkey). $11: a
    // wake-up in the first run's inbox (its trigger notifies), written once the run is.
    createRuns: `WITH given AS (
        SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $5::bigint[],
          $6::text[], $7::double precision[], $8::text[], $9::text[])
          WITH ORDINALITY AS g (id, graph, graph_hash, graph_version, state_version, labels,
            created_at, status, data, n)),
      run AS (
        INSERT INTO ${s}.runs (id, graph, graph_hash, graph_version, state_version, format, labels,
          created_at, seq, status, error, updated_at)
        SELECT id, graph, graph_hash, graph_version, state_version, $10, labels, created_at, 0,
          status, NULL, created_at FROM given
        RETURNING id),
      snapshot AS (
        INSERT INTO ${s}.snapshots (run_id, seq, data)
        SELECT g.id, 0, g.data FROM given g JOIN run r ON r.id = g.id)
      INSERT INTO ${s}.inbox (run_id, attempt, at)
        SELECT g.id, NULL, g.created_at FROM given g JOIN run r ON r.id = g.id
        WHERE $11::boolean AND g.n = 1`,
    wake: `INSERT INTO ${s}.inbox (run_id, attempt, at) SELECT id, NULL, $2 FROM ${s}.runs WHERE id = $1
      FOR KEY SHARE`,
    inbox: `SELECT id, run_id, attempt, at FROM ${s}.inbox WHERE run_id = $1 ORDER BY id`,
    // Fenced by the run's lease, like a commit.
    consume: `DELETE FROM ${s}.inbox i USING ${s}.runs r
      WHERE i.run_id = $1 AND i.id = ANY ($2::bigint[]) AND r.id = $1
        AND r.lease_epoch = $3 AND r.lease_owner = $4`,
    listTasks: `SELECT ${taskColumns} FROM ${s}.tasks WHERE run_id = $1 ORDER BY created_at, activation`,
    registerWorker: `INSERT INTO ${s}.workers (id, host, pid, graphs, expires_at)
      VALUES ($1, $2, $3, $4, ${nowMs} + ceil($5::double precision)::bigint)
      ON CONFLICT (id) DO UPDATE SET graphs = excluded.graphs, expires_at = excluded.expires_at`,
    unregisterWorker: `DELETE FROM ${s}.workers WHERE id = $1`,
    listWorkers: `SELECT id, host, pid, graphs, expires_at, expires_at > ${nowMs} AS live
      FROM ${s}.workers ORDER BY id`,
  };
}

/**
 * The parts a full commit adds for its schedule (see `Commit.schedule`), numbered from the
 * parameter `first`: tasks it schedules (a retry replaces the row of its earlier attempt and
 * bumps its epoch, fencing a worker still running that one), tasks it cancels, inbox items it
 * folded. Each runs only when it has rows, like the commit's other parts.
 */
export function scheduleCtes(s: string, first: number): string {
  const p = (n: number) => `$${first + n}`;
  return `scheduled AS (
        INSERT INTO ${s}.tasks (run_id, activation, attempt, node, graph, graph_hash, not_before, input)
        SELECT head.id, t.activation, t.attempt, t.node, t.graph, t.graph_hash, t.not_before, t.input
        FROM head, unnest(${p(0)}::text[], ${p(1)}::integer[], ${p(2)}::text[], ${p(3)}::text[],
          ${p(4)}::text[], ${p(5)}::bigint[], ${p(6)}::text[])
          AS t (activation, attempt, node, graph, graph_hash, not_before, input)
        WHERE cardinality(${p(0)}::text[]) > 0
        ON CONFLICT (run_id, activation) DO UPDATE SET attempt = excluded.attempt,
          node = excluded.node, graph = excluded.graph, graph_hash = excluded.graph_hash,
          not_before = excluded.not_before, input = excluded.input, owner = NULL, expires_at = 0,
          epoch = ${s}.tasks.epoch + 1),
      cancelled AS (
        DELETE FROM ${s}.tasks k USING head
        WHERE cardinality(${p(7)}::text[]) > 0 AND k.run_id = head.id
          AND k.activation = ANY (${p(7)}::text[])),
      consumed AS (
        DELETE FROM ${s}.inbox i USING head
        WHERE cardinality(${p(8)}::bigint[]) > 0 AND i.run_id = head.id
          AND i.id = ANY (${p(8)}::bigint[]))`;
}

/**
 * The channel a store's schema notifies workers on: one per schema, so two stores in one
 * database wake only their own workers.
 *
 * @example
 * workChannel('"waymark"'); // 'waymark_work_waymark'
 */
export function workChannel(quoted: string): string {
  return `waymark_work_${quoted.replaceAll('"', '')}`.slice(0, 63);
}

/**
 * The migration after which an inbox item wakes idle workers only when it is a wake-up (a
 * cancellation, an answer, a run a draining worker gave back): a task's result wakes them only
 * if its writer asks (`finishTasks`'s `wake`). Every worker woke for every result anywhere and
 * raced to claim its run, which one of them held already: with 4 workers, a 100-way fan-out
 * made 143 claims of its run, 12 of which folded anything.
 */
export function wakeOnlyMigration(s: string, channel: string): string {
  return `
  DROP TRIGGER inbox_arrived ON ${s}.inbox;
  CREATE TRIGGER inbox_arrived AFTER INSERT ON ${s}.inbox
    FOR EACH ROW WHEN (NEW.attempt IS NULL) EXECUTE FUNCTION ${s}.notify_work('${channel}', 'runs');
  `;
}

/** The migration that adds the work queue to a store's schema `s` (its `channel` for NOTIFY). */
export function queueMigration(s: string, channel: string): string {
  return `
  CREATE TABLE ${s}.tasks (
    run_id text COLLATE "C" NOT NULL,
    activation text COLLATE "C" NOT NULL,
    attempt integer NOT NULL,
    node text NOT NULL,
    graph text COLLATE "C" NOT NULL,
    graph_hash text NOT NULL,
    not_before bigint,
    input text NOT NULL,
    owner text,
    epoch bigint NOT NULL DEFAULT 0,
    expires_at bigint NOT NULL DEFAULT 0,
    created_at bigint NOT NULL DEFAULT ${nowMs},
    PRIMARY KEY (run_id, activation)
  );
  CREATE INDEX tasks_claimable ON ${s}.tasks (graph, graph_hash, expires_at, not_before);

  CREATE TABLE ${s}.inbox (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    run_id text COLLATE "C" NOT NULL,
    attempt text,
    at double precision NOT NULL
  );
  CREATE INDEX inbox_by_run ON ${s}.inbox (run_id, id);

  CREATE TABLE ${s}.workers (
    id text COLLATE "C" PRIMARY KEY,
    host text NOT NULL,
    pid integer NOT NULL,
    graphs text NOT NULL,
    expires_at bigint NOT NULL
  );

  -- Idle workers wake on these, one notification per kind of work per transaction (PostgreSQL
  -- folds repeats); the payload names what kind of work there is, never a run. Row triggers,
  -- so that a commit that schedules nothing, a claim and a renewal notify nobody.
  CREATE FUNCTION ${s}.notify_work() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN PERFORM pg_notify(TG_ARGV[0], TG_ARGV[1]); RETURN NULL; END $$;
  CREATE TRIGGER tasks_scheduled AFTER INSERT ON ${s}.tasks
    FOR EACH ROW EXECUTE FUNCTION ${s}.notify_work('${channel}', 'tasks');
  CREATE TRIGGER tasks_released AFTER UPDATE OF owner ON ${s}.tasks
    FOR EACH ROW WHEN (NEW.owner IS NULL) EXECUTE FUNCTION ${s}.notify_work('${channel}', 'tasks');
  CREATE TRIGGER inbox_arrived AFTER INSERT ON ${s}.inbox
    FOR EACH ROW EXECUTE FUNCTION ${s}.notify_work('${channel}', 'runs');
  `;
}
