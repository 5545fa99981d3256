// The memory items kept across runs on PostgreSQL (table `items`, migration 9), by the
// database's clock: the one clock every store's expiry is judged by. Each put also deletes a
// bounded batch of expired items, so the table does not keep what no read returns.

const nowMs = 'floor(extract(epoch FROM statement_timestamp()) * 1000)::double precision';

/** Migration 9: the items, by namespace (encoded as items.ts says) and key, in byte order. */
export function itemsMigration(s: string): string {
  return `
  CREATE TABLE ${s}.items (
    ns text COLLATE "C" NOT NULL,
    key text COLLATE "C" NOT NULL,
    value text NOT NULL,
    created_at double precision NOT NULL,
    updated_at double precision NOT NULL,
    expires_at double precision,
    PRIMARY KEY (ns, key)
  );
  CREATE INDEX items_expiring ON ${s}.items (expires_at) WHERE expires_at IS NOT NULL;`;
}

const columns = 'ns, key, value, created_at, updated_at, expires_at';

/** The statements of the items. */
export function itemTexts(s: string) {
  const live = `(expires_at IS NULL OR expires_at > ${nowMs})`;
  return {
    // $1 ns, $2 key, $3 value, $4 ttl ms or null. The sweep leaves this put's own row alone
    // (one statement cannot both delete and update a row) and the rows another put is sweeping
    // (SKIP LOCKED: two puts never wait for, nor deadlock on, each other's sweep). An item
    // written over once it has expired is a new one: its createdAt is this put's.
    putItem: `WITH swept AS (
        DELETE FROM ${s}.items WHERE ctid IN (
          SELECT ctid FROM ${s}.items WHERE expires_at <= ${nowMs} AND (ns, key) <> ($1, $2)
          LIMIT 100 FOR UPDATE SKIP LOCKED))
      INSERT INTO ${s}.items AS i (${columns})
        VALUES ($1, $2, $3, ${nowMs}, ${nowMs}, ${nowMs} + $4::double precision)
      ON CONFLICT (ns, key) DO UPDATE SET value = EXCLUDED.value,
        updated_at = EXCLUDED.updated_at, expires_at = EXCLUDED.expires_at,
        created_at = CASE WHEN i.expires_at <= EXCLUDED.updated_at THEN EXCLUDED.created_at
          ELSE i.created_at END
      RETURNING ${columns}`,
    getItem: `SELECT ${columns} FROM ${s}.items WHERE ns = $1 AND key = $2 AND ${live}`,
    // [$1, $2) the namespaces under the prefix ($2 null: no end), $3 the filter's JSON or null,
    // $4 limit or null, $5 offset. jsonb compares numbers as numbers.
    searchItems: `SELECT ${columns} FROM ${s}.items i
      WHERE ns >= $1 AND ($2::text IS NULL OR ns < $2) AND ${live}
        AND ($3::jsonb IS NULL OR (jsonb_typeof(i.value::jsonb) = 'object' AND NOT EXISTS (
          SELECT 1 FROM jsonb_each($3::jsonb) f
          WHERE (i.value::jsonb -> f.key) IS DISTINCT FROM f.value)))
      ORDER BY ns, key LIMIT $4 OFFSET $5`,
    listItemNamespaces: `SELECT DISTINCT ns FROM ${s}.items
      WHERE ns >= $1 AND ($2::text IS NULL OR ns < $2) AND ${live} ORDER BY ns`,
    deleteItem: `DELETE FROM ${s}.items WHERE ns = $1 AND key = $2
      RETURNING expires_at IS NULL OR expires_at > ${nowMs} AS live`,
  };
}
