import pg from 'pg';
import type { RunRecord } from '../store.js';
import { Columns, type Row, readLease } from './rows.js';

// How the PostgreSQL store reads its rows: as the shared readers do (rows.ts), with the run's
// head (seq, status, error) and its lease in the runs row, and int8 read as a JavaScript number.

const int8 = 20;

/**
 * int8 as a number when it is a safe integer, else as the text PostgreSQL sent: a row reader
 * then names the column as damaged instead of reading a rounded number. node-postgres reads
 * int8 as text by default; these parsers are given per query, so a pool the store shares with
 * other code keeps that code's own parsers.
 */
function readInt8(text: string): number | string {
  const value = Number(text);
  return Number.isSafeInteger(value) ? value : text;
}

/** The type parsers of every query the store makes. */
export const pgTypes = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === int8) return readInt8;
    return pg.types.getTypeParser(oid, format ?? 'text');
  },
} as pg.CustomTypesConfig;

/**
 * A runs row as a record; whether its lease is live is the `lease_live` column, judged by the
 * database's clock.
 *
 * @example
 * const run = readPgRun(row, 'r1');
 */
export function readPgRun(row: Row, runId: string): RunRecord {
  const c = new Columns(row, { runId, table: 'runs' });
  const lease = readLease(row, runId);
  return {
    id: c.text('id'),
    graph: c.text('graph'),
    graphHash: c.text('graph_hash'),
    graphVersion: c.integer('graph_version'),
    stateVersion: c.integer('state_version'),
    format: c.integer('format'),
    status: c.status('status'),
    seq: c.integer('seq'),
    createdAt: c.time('created_at'),
    updatedAt: c.time('updated_at'),
    error: c.textOrNull('error'),
    labels: c.textOrNull('labels'),
    lease: lease === undefined ? null : { ...lease, live: row.lease_live === true },
  };
}
