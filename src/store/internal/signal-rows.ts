import type { SignalRecord } from '../signal-store.js';
import { Columns, type Row } from './rows.js';

/**
 * A `signals` row as a signal record (SQLite and PostgreSQL name the columns alike).
 *
 * @example
 * const signal = readSignal(row);
 */
export function readSignal(row: Row): SignalRecord {
  const runId = typeof row.run_id === 'string' ? row.run_id : '';
  const c = new Columns(row, { runId, table: 'signals', key: String(row.id) });
  return {
    id: c.text('id'),
    graph: c.text('graph'),
    runId: c.textOrNull('run_id'),
    key: c.textOrNull('key'),
    name: c.text('name'),
    payload: c.text('payload'),
    sentAt: c.time('sent_at'),
    expiresAt: c.time('expires_at'),
    consumedRun: c.textOrNull('consumed_run'),
    consumedWait: c.textOrNull('consumed_wait'),
    consumedAt: c.timeOrNull('consumed_at'),
  };
}

/** The signal's fields as named parameters of a statement (SQLite's `@name`). */
export function signalParams(s: SignalRecord): Record<string, unknown> {
  return { ...s };
}
