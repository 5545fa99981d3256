import { afterAll, expect, it } from 'vitest';
import { PostgresStore } from '../../src/postgres.js';
import { pgNotOwned, pgOwned } from '../../src/store/internal/pg-retention-sql.js';
import { describePg, dropSchema, schemaName, skipReason, testPool } from './fixtures/postgres.js';

// The list of tables a run owns on PostgreSQL, checked against the schema's real tables.

const schema = schemaName();
const pool = skipReason === undefined ? testPool({ max: 2 }) : undefined;

afterAll(async () => {
  if (pool === undefined) return;
  await dropSchema(pool, schema);
  await pool.end();
});

/** A column that names a run: its id (run_id, *_run_id, run). */
const runColumn = /(^|_)run(_id)?$/;

describePg('deleting runs from PostgreSQL', () => {
  it('knows every table with a run column: each is deleted with the run, or says why it is kept', async () => {
    const store = await PostgresStore.open({ pool: pool!, schema });
    await store.close();
    const { rows } = await pool!.query<{ table_name: string; column_name: string }>(
      `SELECT table_name, column_name FROM information_schema.columns
       WHERE table_schema = $1 ORDER BY table_name, ordinal_position`,
      [schema],
    );
    const tables = [...new Set(rows.map((r) => r.table_name))];
    const withRunColumn = [
      ...new Set(rows.filter((r) => runColumn.test(r.column_name)).map((r) => r.table_name)),
    ];
    // A table added later (signals, schedules, limits) with a run column fails here until it is
    // put in `pgOwned` (deleted with the run) or `pgNotOwned` (with why it outlives it).
    const listed = new Set([...Object.keys(pgOwned), ...Object.keys(pgNotOwned)]);
    expect(withRunColumn.filter((t) => !listed.has(t))).toEqual([]);
    expect([...listed].filter((t) => !tables.includes(t))).toEqual([]);
  });
});
