import { RATE_HOLD_MS } from '../rates.js';

// Rate limits on PostgreSQL (rates.ts): a row per admission, a row per blocked resource. An
// admission is one transaction (pg/rates.ts) that first takes the resource's advisory lock
// (rateLock), so two workers deciding on one resource go one after the other, whatever the
// isolation level; under READ COMMITTED each statement after the lock sees what the one before
// committed. The rows belong to no run: deleting a run leaves them, and they leave by time.

/** The migration that makes the tables: appended to pg-schema.ts's list. */
export function ratesMigration(s: string): string {
  return `
  CREATE TABLE ${s}.rate_admissions (
    resource text COLLATE "C" NOT NULL,
    id text COLLATE "C" NOT NULL,
    at bigint NOT NULL,
    tokens bigint NOT NULL,
    PRIMARY KEY (resource, id)
  );
  CREATE INDEX rate_admissions_by_at ON ${s}.rate_admissions (resource, at);
  CREATE TABLE ${s}.rate_blocks (
    resource text COLLATE "C" PRIMARY KEY,
    until bigint NOT NULL
  );`;
}

/** The statements of the rate limits, for the quoted schema `s`. */
export function rateTexts(s: string) {
  const since = `$2::bigint - ${RATE_HOLD_MS}`;
  return {
    // $1 resource. Keyed by the schema too: two stores on one database never wait on each other.
    rateLock: `SELECT pg_advisory_xact_lock(hashtextextended('waymark.rate:${s}:' || $1::text, 0))`,
    // $1 resource, $2 at: deletes what left the window, and reads what is left of it and the
    // block. The DELETE and the reads see the same snapshot: the reads take only rows inside
    // the window, which the DELETE does not touch.
    rateLook: `WITH swept AS (
        DELETE FROM ${s}.rate_admissions WHERE resource = $1 AND at <= ${since})
      SELECT 'admission' AS kind, id, at, tokens FROM ${s}.rate_admissions
        WHERE resource = $1 AND at > ${since}
      UNION ALL
      SELECT 'block', NULL, until, NULL FROM ${s}.rate_blocks WHERE resource = $1 AND until > $2`,
    // $1 resource, $2 id, $3 at, $4 tokens.
    rateAdmit: `INSERT INTO ${s}.rate_admissions (resource, id, at, tokens) VALUES ($1, $2, $3, $4)`,
    // $1 resource, $2 id, $3 tokens.
    rateSettle: `UPDATE ${s}.rate_admissions SET tokens = $3 WHERE resource = $1 AND id = $2`,
    // $1 resource, $2 until.
    rateBlock: `INSERT INTO ${s}.rate_blocks AS b (resource, until) VALUES ($1, $2)
      ON CONFLICT (resource) DO UPDATE SET until = greatest(b.until, EXCLUDED.until)`,
    // $1 resource, $2 at.
    rateWindow: `SELECT
        (SELECT count(*)::bigint FROM ${s}.rate_admissions WHERE resource = $1 AND at > ${since})
          AS requests,
        (SELECT coalesce(sum(tokens), 0)::bigint FROM ${s}.rate_admissions
          WHERE resource = $1 AND at > ${since}) AS tokens,
        (SELECT until FROM ${s}.rate_blocks WHERE resource = $1 AND until > $2) AS blocked_until`,
  };
}
