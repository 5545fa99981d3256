// Concurrency limits on PostgreSQL (limits.ts): one row per limited run. Every change to a
// key's slots takes that key's transaction-scoped advisory lock first, so two transactions never
// both take its last slot, whatever the isolation level: a run is admitted (limit_admit) in the
// transaction that creates it, and a trigger on the runs' status frees its slot in the
// transaction that stops it running (a commit, a failed run) and hands the freed slots to the
// oldest queued runs of its key, each with a wake-up in its inbox (whose trigger tells idle
// workers). The claims (pg-queue-sql.ts) are unchanged: a queued run is `waiting`, found only
// through its inbox once it holds a slot.

/** The migration: the table, its functions, and the trigger on the runs' status. */
export function limitsMigration(s: string): string {
  const lock = `PERFORM pg_advisory_xact_lock(hashtext('${s}' || chr(10) || p_graph || chr(10) || p_key));`;
  return `
  CREATE TABLE ${s}.limit_runs (
    n bigint GENERATED ALWAYS AS IDENTITY,
    run_id text COLLATE "C" PRIMARY KEY,
    graph text COLLATE "C" NOT NULL,
    limit_key text COLLATE "C" NOT NULL,
    concurrency integer NOT NULL,
    state text NOT NULL,
    since double precision NOT NULL
  );
  CREATE INDEX limit_runs_by_key ON ${s}.limit_runs (graph, limit_key, state, n);

  CREATE FUNCTION ${s}.limit_admit(p_run text, p_graph text, p_key text, p_concurrency integer,
      p_at double precision) RETURNS text LANGUAGE plpgsql AS $$
  DECLARE
    v_state text;
  BEGIN
    ${lock}
    IF (SELECT count(*) FROM ${s}.limit_runs
          WHERE graph = p_graph AND limit_key = p_key AND state = 'active') < p_concurrency
        AND NOT EXISTS (SELECT FROM ${s}.limit_runs
          WHERE graph = p_graph AND limit_key = p_key AND state = 'queued') THEN
      v_state := 'active';
    ELSE
      v_state := 'queued';
    END IF;
    INSERT INTO ${s}.limit_runs (run_id, graph, limit_key, concurrency, state, since)
      VALUES (p_run, p_graph, p_key, p_concurrency, v_state, p_at);
    IF v_state = 'queued' THEN
      UPDATE ${s}.runs SET status = 'waiting' WHERE id = p_run AND status = 'running';
    END IF;
    RETURN v_state;
  END $$;

  CREATE FUNCTION ${s}.limit_free(p_graph text, p_key text, p_concurrency integer,
      p_at double precision) RETURNS void LANGUAGE plpgsql AS $$
  BEGIN
    WITH next AS (
        SELECT run_id FROM ${s}.limit_runs
        WHERE graph = p_graph AND limit_key = p_key AND state = 'queued'
        ORDER BY n
        LIMIT greatest(0, p_concurrency - (SELECT count(*) FROM ${s}.limit_runs
          WHERE graph = p_graph AND limit_key = p_key AND state = 'active'))),
      taken AS (
        UPDATE ${s}.limit_runs l SET state = 'active', since = p_at
        FROM next WHERE l.run_id = next.run_id
        RETURNING l.run_id)
    INSERT INTO ${s}.inbox (run_id, attempt, at) SELECT run_id, NULL, p_at FROM taken;
  END $$;

  CREATE FUNCTION ${s}.limit_follow() RETURNS trigger LANGUAGE plpgsql AS $$
  DECLARE
    p_graph text;
    p_key text;
    v_concurrency integer;
    v_state text;
  BEGIN
    SELECT graph, limit_key, concurrency INTO p_graph, p_key, v_concurrency
      FROM ${s}.limit_runs WHERE run_id = NEW.id;
    IF NOT FOUND THEN RETURN NULL; END IF;
    ${lock}
    SELECT state INTO v_state FROM ${s}.limit_runs WHERE run_id = NEW.id;
    IF NEW.status = 'running' THEN
      UPDATE ${s}.limit_runs SET state = 'active', since = NEW.updated_at
        WHERE run_id = NEW.id AND state <> 'active';
    -- A queued run stays queued while it waits (limit_admit's own update); it leaves the queue
    -- only when it stops.
    ELSIF NOT (NEW.status = 'waiting' AND v_state = 'queued') AND v_state <> 'idle' THEN
      UPDATE ${s}.limit_runs SET state = 'idle', since = NEW.updated_at WHERE run_id = NEW.id;
      IF v_state = 'active' THEN
        PERFORM ${s}.limit_free(p_graph, p_key, v_concurrency, NEW.updated_at);
      END IF;
    END IF;
    RETURN NULL;
  END $$;

  CREATE TRIGGER limit_follow AFTER UPDATE OF status ON ${s}.runs
    FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status)
    EXECUTE FUNCTION ${s}.limit_follow();
  `;
}

const columns = 'run_id, graph, limit_key, concurrency, state, since';

/** The statements of the limits, for the quoted schema `s`. */
export function limitTexts(s: string) {
  return {
    limitAdmit: `SELECT ${s}.limit_admit($1, $2, $3, $4, $5) AS state`,
    runLimit: `SELECT ${columns} FROM ${s}.limit_runs WHERE run_id = $1`,
    listQueued: `SELECT ${columns} FROM ${s}.limit_runs
      WHERE state = 'queued' AND ($1::text IS NULL OR graph = $1)
        AND ($2::text IS NULL OR limit_key = $2)
      ORDER BY n LIMIT $3`,
    activeCount: `SELECT count(*)::integer AS n FROM ${s}.limit_runs
      WHERE graph = $1 AND limit_key = $2 AND state = 'active'`,
  };
}
