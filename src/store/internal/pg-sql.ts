import { createHash } from 'node:crypto';
import { storedStatuses } from '../store.js';
import { foldFailureTexts } from './pg-fold-failures.js';
import { itemTexts } from './pg-items-sql.js';
import { limitTexts } from './pg-limits-sql.js';
import { queueTexts, runCandidates, scheduleCtes } from './pg-queue-sql.js';
import { rateTexts } from './pg-rates-sql.js';
import { scheduleRowTexts } from './pg-schedules-sql.js';
import { signalTexts } from './pg-signals-sql.js';
import { watchTexts } from './pg-watch-sql.js';

// The SQL of the PostgreSQL store, one statement per operation, for one schema. Each is a
// named prepared statement: parsed and planned once per connection, then only bound and run.
// Every operation that the contract makes atomic is ONE statement (data-modifying CTEs), so it
// is its own transaction and one round trip; a refusal is a statement that changed no row,
// never an exception, so the pooled connection is kept.

/** A statement as node-postgres takes it: `name` makes it prepared once per connection. */
export interface Statement {
  readonly name: string;
  readonly text: string;
}

/** The database's clock in ms since the epoch: the one clock every lease is judged by. */
const nowMs = 'floor(extract(epoch FROM statement_timestamp()) * 1000)::bigint';

const statusList = storedStatuses.map((status) => `'${status}'`).join(', ');

/** A run row as `readPgRun` reads it, its lease's liveness judged here, by the database. */
const runColumns = `id, graph, graph_hash, graph_version, state_version, format, status, seq,
  created_at, updated_at, error, labels, lease_owner, lease_host, lease_pid, lease_epoch,
  lease_expires_at, lease_expires_at > ${nowMs} AS lease_live`;
const runColumnCount = 18;

const waitColumns = `run_id, request_id, node, activation, request, opened_at, answer,
  answered_by, answered_at, closed_at`;

/**
 * A run row (part 0, with its latest snapshot's seq and data) and then its events after
 * `after` (part 1), in one statement: one snapshot of the database, so the events cannot run
 * past the run's seq unless a row is damaged. Rows come in no particular order; the store sorts.
 */
function history(s: string, after: string): string {
  const blanks = Array.from({ length: runColumnCount + 2 }, () => 'NULL').join(', ');
  return `WITH run AS (SELECT ${runColumns} FROM ${s}.runs WHERE id = $1),
    snap AS (SELECT seq, data FROM ${s}.snapshots WHERE run_id = $1 ORDER BY seq DESC LIMIT 1)
  SELECT 0 AS part, run.*, snap.seq AS snapshot_seq, snap.data AS snapshot_data,
    NULL::bigint AS event_seq, NULL::double precision AS event_at, NULL::text AS event,
    NULL::text AS trace
  FROM run LEFT JOIN snap ON true
  UNION ALL
  SELECT 1, ${blanks}, e.seq, e.at, e.event, e.trace
  FROM ${s}.events e
  WHERE e.run_id = $1 AND e.seq > ${after} AND EXISTS (SELECT FROM run)`;
}

/**
 * The head move every commit starts with: fenced by seq, by epoch, and by a readable status.
 * `steps` is how many events the commit appends (a group's is the length of its seq array).
 */
function head(s: string, release: string, steps = '1'): string {
  return `head AS (
    UPDATE ${s}.runs SET seq = $2, updated_at = $3, status = $6, error = $7,
      lease_expires_at = CASE WHEN ${release}::boolean THEN 0 ELSE lease_expires_at END
    WHERE id = $1 AND seq = $2 - ${steps} AND status IN (${statusList})
      AND ($8::bigint IS NULL OR lease_epoch = $8)
    RETURNING id)`;
}

/**
 * A commit with a snapshot, waits, timers or a schedule, in one statement; `group`: of several
 * consecutive steps (a worker's fold), whose events come as arrays ($4 events, $5 traces, $33
 * seqs, $34 times) and whose snapshot, if any, is at seq $35. The CTEs cannot see each other's
 * writes; the store never gives two of them the same row. Each part runs only when it has
 * something to do (a condition on its parameter alone, which PostgreSQL checks once before it
 * reads any row): the generic plan of a prepared statement reads `= ANY (array)` as a filter
 * over every wait of the run, and a step that closed nothing used to cost more the more waits
 * its run had opened.
 */
function fullCommit(s: string, group: boolean): string {
  const events = group
    ? `SELECT id, e.seq, e.at, e.event, e.trace FROM head,
          unnest($33::bigint[], $34::double precision[], $4::text[], $5::text[]) AS e (seq, at, event, trace)`
    : 'SELECT id, $2, $3, $4, $5 FROM head';
  const snapshotSeq = group ? '$35::bigint' : '$2';
  return `WITH ${head(s, '$32', group ? 'cardinality($33::bigint[])' : '1')},
      event AS (
        INSERT INTO ${s}.events (run_id, seq, at, event, trace) ${events}),
      snapshot AS (
        INSERT INTO ${s}.snapshots (run_id, seq, data)
        SELECT id, ${snapshotSeq}, $9 FROM head WHERE $9::text IS NOT NULL),
      pruned AS (
        DELETE FROM ${s}.snapshots prior USING head
        WHERE $9::text IS NOT NULL AND prior.run_id = head.id AND prior.seq > 0
          AND prior.seq < ${snapshotSeq}),
      opened AS (
        INSERT INTO ${s}.waits (${waitColumns})
        SELECT head.id, w.* FROM head,
          unnest($10::text[], $11::text[], $12::text[], $13::text[], $14::double precision[],
            $15::text[], $16::text[], $17::double precision[], $18::double precision[]) AS w
        WHERE cardinality($10::text[]) > 0
        ON CONFLICT (run_id, request_id) DO NOTHING),
      closed AS (
        UPDATE ${s}.waits w SET closed_at = $3 FROM head
        WHERE cardinality($19::text[]) > 0 AND w.run_id = head.id
          AND w.request_id = ANY ($19::text[]) AND w.answer IS NULL AND w.closed_at IS NULL),
      cleared AS (
        DELETE FROM ${s}.timers t USING head
        WHERE cardinality($20::text[]) > 0 AND t.run_id = head.id AND t.id = ANY ($20::text[])),
      timers AS (
        INSERT INTO ${s}.timers (run_id, id, at)
        SELECT head.id, t.id, t.at FROM head, unnest($21::text[], $22::double precision[]) AS t (id, at)
        WHERE cardinality($21::text[]) > 0
        ON CONFLICT (run_id, id) DO UPDATE SET at = excluded.at),
      ${scheduleCtes(s, 23)}
      SELECT count(*)::integer AS done FROM head`;
}

/**
 * A worker's fold claim and what each fold reads, in one statement: the claim takes runs with
 * something to fold and no live owner (runCandidates), each at epoch + 1; then per run its row
 * (part 0, with its latest snapshot), its events after that snapshot (part 1) and its inbox (part 2),
 * each row with its run's id first. One snapshot of the database, as loadRun's. The reads go
 * run by run (LATERAL), by index: a join of the claimed runs with the events table would let
 * the planner scan the whole of it.
 */
function claimAndLoad(s: string): string {
  const blanks = Array.from({ length: runColumnCount + 2 }, () => 'NULL').join(', ');
  return `WITH ${runCandidates(s)},
    claimed AS (
      UPDATE ${s}.runs SET lease_epoch = coalesce(lease_epoch, 0) + 1, lease_owner = $4,
        lease_host = $5, lease_pid = $6,
        lease_expires_at = ${nowMs} + ceil($7::double precision)::bigint
      WHERE id = ANY (ARRAY(SELECT cid FROM candidates))
      RETURNING ${runColumns}),
    snap AS (
      SELECT c.id AS run_id, l.seq, l.data FROM claimed c
      LEFT JOIN LATERAL (SELECT seq, data FROM ${s}.snapshots
        WHERE run_id = c.id ORDER BY seq DESC LIMIT 1) l ON true)
  SELECT 0 AS part, c.id AS rid, c.*, snap.seq AS snapshot_seq, snap.data AS snapshot_data,
    NULL::bigint AS event_seq, NULL::double precision AS event_at, NULL::text AS event,
    NULL::text AS trace, NULL::bigint AS inbox_id, NULL::text AS inbox_attempt,
    NULL::double precision AS inbox_at
  FROM claimed c JOIN snap ON snap.run_id = c.id
  UNION ALL
  SELECT 1, snap.run_id, ${blanks}, e.seq, e.at, e.event, e.trace, NULL, NULL, NULL
  FROM snap, LATERAL (SELECT seq, at, event, trace FROM ${s}.events
    WHERE run_id = snap.run_id AND seq > coalesce(snap.seq, 0)) e
  UNION ALL
  SELECT 2, snap.run_id, ${blanks}, NULL, NULL, NULL, NULL, i.id, i.attempt, i.at
  FROM snap, LATERAL (SELECT id, attempt, at FROM ${s}.inbox WHERE run_id = snap.run_id) i`;
}

function texts(s: string) {
  return {
    ...queueTexts(s),
    ...foldFailureTexts(s),
    claimAndLoad: claimAndLoad(s),
    ...watchTexts(s),
    ...itemTexts(s),
    ...limitTexts(s),
    ...scheduleRowTexts(s),
    ...signalTexts(s),
    ...rateTexts(s),
    createRun: `WITH run AS (
        INSERT INTO ${s}.runs (id, graph, graph_hash, graph_version, state_version, format, labels,
          created_at, seq, status, error, updated_at)
        VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 0, $9, NULL, $8)
        ON CONFLICT (id) DO NOTHING
        RETURNING id),
      sources AS (
        INSERT INTO ${s}.run_sources (run_id, source)
        SELECT DISTINCT run.id, src FROM run, unnest($11::text[]) AS src)
      INSERT INTO ${s}.snapshots (run_id, seq, data) SELECT id, 0, $10 FROM run`,
    // Most steps: the head moves and the event is appended, or neither (zero rows).
    commitStep: `WITH ${head(s, '$9')}
      INSERT INTO ${s}.events (run_id, seq, at, event, trace) SELECT id, $2, $3, $4, $5 FROM head`,
    // A step with a snapshot, waits, timers or a schedule: the same, with all of them.
    commitFull: fullCommit(s, false),
    // Several steps of one run, all or none (a worker's fold): one statement, one round trip.
    commitGroup: fullCommit(s, true),
    getRun: `SELECT ${runColumns} FROM ${s}.runs WHERE id = $1`,
    loadRun: history(s, '(SELECT seq FROM snap)'),
    events: history(s, '$2'),
    listRuns: `SELECT ${runColumns} FROM ${s}.runs
      WHERE ($1::text[] IS NULL OR status = ANY ($1)) AND ($2::text IS NULL OR graph = $2)
        AND ($4::jsonb IS NULL OR coalesce(labels, '{}')::jsonb @> $4::jsonb)
        AND ($5::double precision IS NULL OR (created_at, id) < ($5::double precision, $6::text))
        AND ($7::double precision IS NULL OR created_at >= $7::double precision)
        AND ($8::double precision IS NULL OR created_at < $8::double precision)
      ORDER BY created_at DESC, id DESC
      LIMIT $3`,
    snapshotAt: `SELECT seq, data FROM ${s}.snapshots WHERE run_id = $1 AND seq <= $2
      ORDER BY seq DESC LIMIT 1`,
    usage: `SELECT
        (SELECT count(*) FROM ${s}.events WHERE run_id = r.id) AS events,
        (SELECT coalesce(sum(octet_length(event) + coalesce(octet_length(trace), 0)), 0)
          FROM ${s}.events WHERE run_id = r.id) AS event_bytes,
        (SELECT count(*) FROM ${s}.snapshots WHERE run_id = r.id) AS snapshots,
        (SELECT coalesce(sum(octet_length(data)), 0) FROM ${s}.snapshots WHERE run_id = r.id)
          AS snapshot_bytes
      FROM ${s}.runs r WHERE r.id = $1`,
    // A live lease of another owner is kept unless the claim takes it over at its epoch; the
    // same owner keeps its epoch; anyone else gets epoch + 1. SET reads the row as it was.
    acquire: `UPDATE ${s}.runs SET
        lease_epoch = CASE WHEN lease_expires_at > ${nowMs} AND lease_owner = $2
          THEN lease_epoch ELSE coalesce(lease_epoch, 0) + 1 END,
        lease_owner = $2, lease_host = $3, lease_pid = $4,
        lease_expires_at = ${nowMs} + ceil($5::double precision)::bigint
      WHERE id = $1 AND (lease_epoch IS NULL OR NOT lease_expires_at > ${nowMs}
        OR lease_owner = $2 OR lease_epoch = $6::bigint)
      RETURNING lease_epoch AS epoch, lease_expires_at AS expires_at`,
    leaseOf: `SELECT lease_owner, lease_host, lease_pid, lease_epoch, lease_expires_at,
        ${nowMs} AS now
      FROM ${s}.runs WHERE id = $1`,
    // Every lease of the batch in one statement; those that no longer match are lost.
    renew: `UPDATE ${s}.runs r SET lease_expires_at = ${nowMs} + ceil($4::double precision)::bigint
      FROM unnest($1::text[], $2::bigint[], $3::text[]) AS l (run_id, epoch, owner)
      WHERE r.id = l.run_id AND r.lease_epoch = l.epoch AND r.lease_owner = l.owner
        AND r.lease_expires_at > 0
      RETURNING r.id, r.lease_epoch AS epoch, r.lease_owner AS owner, r.lease_expires_at AS expires_at`,
    release: `UPDATE ${s}.runs SET lease_expires_at = 0
      WHERE id = $1 AND lease_epoch = $2 AND lease_owner = $3`,
    listTimers: `SELECT r.id AS found, t.run_id, t.id, t.at
      FROM ${s}.runs r LEFT JOIN ${s}.timers t ON t.run_id = r.id
      WHERE r.id = $1 ORDER BY t.at, t.id`,
    dueTimers: `SELECT run_id, id, at FROM ${s}.timers WHERE at <= $1
      ORDER BY at, run_id, id LIMIT $2`,
    nextTimer: `SELECT min(at) AS at FROM ${s}.timers WHERE at > $1`,
    // The row that stands, in the same statement when this call recorded it.
    recordEffect: `WITH run AS (SELECT id FROM ${s}.runs WHERE id = $1),
      recorded AS (
        INSERT INTO ${s}.effects (run_id, key, result, at) SELECT id, $2, $3, $4 FROM run
        ON CONFLICT (run_id, key) DO NOTHING
        RETURNING run_id, key, result, at)
      SELECT run.id AS found, recorded.* FROM run LEFT JOIN recorded ON true`,
    getEffect: `SELECT r.id AS found, e.run_id, e.key, e.result, e.at
      FROM ${s}.runs r LEFT JOIN ${s}.effects e ON e.run_id = r.id AND e.key = $2
      WHERE r.id = $1`,
    // Part of the run, and in it each effect: an unknown run is told from one with none.
    listEffects: `SELECT r.id AS found, e.run_id, e.key, e.result, e.at
      FROM ${s}.runs r LEFT JOIN ${s}.effects e ON e.run_id = r.id
      WHERE r.id = $1 ORDER BY e.at, e.key`,
    openWait: `WITH run AS (SELECT id FROM ${s}.runs WHERE id = $1),
      opened AS (
        INSERT INTO ${s}.waits (${waitColumns})
        SELECT id, $2, $3, $4, $5, $6, $7, $8, $9, $10 FROM run
        ON CONFLICT (run_id, request_id) DO NOTHING)
      SELECT id AS found FROM run`,
    // One conditional UPDATE: of two answers racing, the second re-reads the row the first
    // wrote once its lock is free, finds an answer, and changes nothing.
    // With its wake-up, in one statement: an answer recorded must never wait unseen (the
    // inbox's trigger tells idle workers).
    answerWait: `WITH answered AS (
        UPDATE ${s}.waits SET answer = $3, answered_by = $4, answered_at = $5
        WHERE run_id = $1 AND request_id = $2 AND answer IS NULL AND closed_at IS NULL
        RETURNING ${waitColumns}),
      woken AS (INSERT INTO ${s}.inbox (run_id, attempt, at) SELECT run_id, NULL, $5 FROM answered)
      SELECT * FROM answered`,
    getWait: `SELECT r.id AS found, w.run_id, w.request_id, w.node, w.activation, w.request,
        w.opened_at, w.answer, w.answered_by, w.answered_at, w.closed_at
      FROM ${s}.runs r LEFT JOIN ${s}.waits w ON w.run_id = r.id AND w.request_id = $2
      WHERE r.id = $1`,
    listWaits: `SELECT r.id AS found, w.run_id, w.request_id, w.node, w.activation, w.request,
        w.opened_at, w.answer, w.answered_by, w.answered_at, w.closed_at
      FROM ${s}.runs r LEFT JOIN ${s}.waits w ON w.run_id = r.id
        AND ($2::boolean IS NULL OR (w.answer IS NULL AND w.closed_at IS NULL) = $2)
      WHERE r.id = $1 ORDER BY w.opened_at, w.n`,
    putMemo: `INSERT INTO ${s}.memos (graph, node, node_version, input_hash, output, run_id,
        activation, at)
      VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
    findMemo: `SELECT graph, node, node_version, input_hash, output, run_id, activation, at
      FROM ${s}.memos WHERE graph = $1 AND node = $2 AND node_version = $3 AND input_hash = $4
      ORDER BY n DESC LIMIT 1`,
    clearMemos: `DELETE FROM ${s}.memos WHERE graph = $1 AND ($2::text IS NULL OR node = $2)`,
  };
}

/** Every statement of the store for the quoted schema `s`. */
export type PgStatements = { readonly [K in keyof ReturnType<typeof texts>]: Statement };

/**
 * The store's statements for one schema. A statement's name carries a hash of its text: the
 * names are per connection, and two stores (two schemas, two versions of waymark) may share a
 * pool without one's prepared statement standing in for the other's.
 *
 * @example
 * const sql = pgStatements('"waymark"');
 * await pool.query({ ...sql.getRun, values: ['r1'] });
 */
export function pgStatements(s: string): PgStatements {
  return Object.fromEntries(
    Object.entries(texts(s)).map(([key, text]) => {
      const hash = createHash('sha256').update(text).digest('hex').slice(0, 16);
      return [key, { name: `waymark_${key}_${hash}`, text }];
    }),
  ) as unknown as PgStatements;
}
