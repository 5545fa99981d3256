// The SQL of signals on PostgreSQL (SignalStore in signal-store.ts). Each delivery is ONE
// statement that locks the wait row and the signal row it pairs (FOR UPDATE ... SKIP LOCKED)
// before it writes the answer, the consumption and the inbox row (whose trigger NOTIFYs idle
// workers): of two deliveries racing for a wait or a signal, one pairs them, the other skips.

/** Migration: the signals table and the open event waits that asked for a signal. */
export function signalsMigration(s: string): string {
  return `
  CREATE TABLE ${s}.signals (
    id text COLLATE "C" PRIMARY KEY,
    graph text COLLATE "C" NOT NULL,
    run_id text COLLATE "C",
    key text COLLATE "C",
    name text COLLATE "C" NOT NULL,
    payload text NOT NULL,
    sent_at double precision NOT NULL,
    expires_at double precision NOT NULL,
    consumed_run text COLLATE "C",
    consumed_wait text COLLATE "C",
    consumed_at double precision
  );
  CREATE INDEX signals_kept ON ${s}.signals (graph, name, sent_at) WHERE consumed_at IS NULL;
  CREATE INDEX signals_by_run ON ${s}.signals (run_id) WHERE run_id IS NOT NULL;
  CREATE INDEX signals_by_taker ON ${s}.signals (consumed_run) WHERE consumed_run IS NOT NULL;
  CREATE TABLE ${s}.signal_waits (
    run_id text COLLATE "C" NOT NULL,
    request_id text COLLATE "C" NOT NULL,
    graph text COLLATE "C" NOT NULL,
    name text COLLATE "C" NOT NULL,
    key text COLLATE "C",
    PRIMARY KEY (run_id, request_id)
  );
  CREATE INDEX signal_waits_by_key ON ${s}.signal_waits (graph, name, key);`;
}

const signalColumns = `id, graph, run_id, key, name, payload, sent_at, expires_at, consumed_run,
  consumed_wait, consumed_at`;

/** The statements, keyed by name, for the quoted schema `s`. */
export function signalTexts(s: string) {
  /** The open event wait a signal `sig` is for, first opened first, locked. */
  const listener = (sig: { graph: string; name: string; runId: string; key: string }) => `
    SELECT w.run_id, w.request_id FROM ${s}.signal_waits l
      JOIN ${s}.waits w ON w.run_id = l.run_id AND w.request_id = l.request_id
    WHERE l.graph = ${sig.graph} AND l.name = ${sig.name}
      AND w.answer IS NULL AND w.closed_at IS NULL
      AND CASE WHEN ${sig.runId} IS NOT NULL THEN l.run_id = ${sig.runId} ELSE l.key = ${sig.key} END
    ORDER BY w.opened_at, w.n LIMIT 1
    FOR UPDATE OF w SKIP LOCKED`;
  /** Answers the locked wait `target` with `payload`, wakes its run, forgets its listening. */
  const deliver = (payload: string, by: string, at: string) => `
    answered AS (
      UPDATE ${s}.waits w SET answer = ${payload}, answered_by = ${by}, answered_at = ${at}
      FROM target t WHERE w.run_id = t.run_id AND w.request_id = t.request_id
        AND w.answer IS NULL AND w.closed_at IS NULL
      RETURNING w.run_id, w.request_id),
    woken AS (INSERT INTO ${s}.inbox (run_id, attempt, at) SELECT run_id, NULL, ${at} FROM answered),
    unlisten AS (DELETE FROM ${s}.signal_waits l USING answered a
      WHERE l.run_id = a.run_id AND l.request_id = a.request_id)`;
  return {
    // A duplicate id fails the INSERT (unique violation), and with it the whole statement: an
    // answer given here to a wait is never kept for a signal that was not recorded.
    sendSignal: `WITH target AS (${listener({ graph: '$2', name: '$5', runId: '$3::text', key: '$4::text' })}),
      ${deliver('$6', "'signal:' || $1", '$7')},
      ins AS (
        INSERT INTO ${s}.signals (${signalColumns})
        SELECT $1, $2, $3, $4, $5, $6, $7, $8, a.run_id, a.request_id,
          CASE WHEN a.run_id IS NULL THEN NULL ELSE $7::double precision END
        FROM (SELECT 1) one LEFT JOIN answered a ON true
        RETURNING ${signalColumns})
      SELECT * FROM ins`,
    getSignal: `SELECT ${signalColumns} FROM ${s}.signals WHERE id = $1`,
    matchSignal: `WITH listen AS (
        INSERT INTO ${s}.signal_waits (run_id, request_id, graph, name, key)
        VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING),
      target AS (
        SELECT run_id, request_id FROM ${s}.waits
        WHERE run_id = $1 AND request_id = $2 AND answer IS NULL AND closed_at IS NULL
        FOR UPDATE SKIP LOCKED),
      sig AS (
        SELECT id, payload FROM ${s}.signals
        WHERE graph = $3 AND name = $4 AND consumed_at IS NULL AND expires_at > $6
          AND (run_id = $1 OR (run_id IS NULL AND key = $5::text))
          AND EXISTS (SELECT 1 FROM target)
        ORDER BY sent_at, id LIMIT 1
        FOR UPDATE SKIP LOCKED),
      answered AS (
        UPDATE ${s}.waits w SET answer = sig.payload, answered_by = 'signal:' || sig.id,
          answered_at = $6
        FROM sig, target t WHERE w.run_id = t.run_id AND w.request_id = t.request_id
        RETURNING w.run_id, w.request_id),
      woken AS (INSERT INTO ${s}.inbox (run_id, attempt, at) SELECT run_id, NULL, $6 FROM answered),
      consumed AS (
        UPDATE ${s}.signals y SET consumed_run = a.run_id, consumed_wait = a.request_id,
          consumed_at = $6
        FROM sig, answered a WHERE y.id = sig.id
        RETURNING ${signalColumns.replace(/(\w+)/g, 'y.$1')})
      SELECT * FROM consumed`,
    redeliverSignal: `WITH sig AS (
        SELECT id, graph, run_id, key, name, payload FROM ${s}.signals
        WHERE id = $1 AND consumed_at IS NULL AND expires_at > $2
        FOR UPDATE SKIP LOCKED),
      target AS (${listener({
        graph: '(SELECT graph FROM sig)',
        name: '(SELECT name FROM sig)',
        runId: '(SELECT run_id FROM sig)',
        key: '(SELECT key FROM sig)',
      })}),
      ${deliver('(SELECT payload FROM sig)', "'signal:' || $1", '$2')},
      consumed AS (
        UPDATE ${s}.signals y SET consumed_run = a.run_id, consumed_wait = a.request_id,
          consumed_at = $2
        FROM sig, answered a WHERE y.id = sig.id
        RETURNING ${signalColumns.replace(/(\w+)/g, 'y.$1')})
      SELECT * FROM consumed`,
    listSignals: `SELECT ${signalColumns} FROM ${s}.signals
      WHERE ($1::text IS NULL OR graph = $1) AND ($2::text IS NULL OR run_id = $2)
        AND ($3::text IS NULL
          OR ($3 = 'consumed' AND consumed_at IS NOT NULL)
          OR ($3 = 'kept' AND consumed_at IS NULL AND expires_at > $4)
          OR ($3 = 'expired' AND consumed_at IS NULL AND expires_at <= $4))
      ORDER BY sent_at, id`,
    expireSignals: `DELETE FROM ${s}.signals WHERE consumed_at IS NULL AND expires_at <= $1`,
  };
}
