// Signals for event waits on PostgreSQL (SignalStore in signal-store.ts); the SQL is in
// pg-signals-sql.ts.

import type { EventWait, SignalFilter, SignalRecord, SignalSent } from '../../signal-store.js';
import { uniqueViolation } from '../pg-errors.js';
import { readSignal } from '../signal-rows.js';
import type { PgConnection } from './connection.js';

/** A signal whose id is taken: its statement wrote nothing. */
const duplicate = Symbol('duplicate signal');

export async function sendSignal(db: PgConnection, signal: SignalRecord): Promise<SignalSent> {
  const values = [
    signal.id,
    signal.graph,
    signal.runId,
    signal.key,
    signal.name,
    signal.payload,
    signal.sentAt,
    signal.expiresAt,
  ];
  let sent: SignalRecord;
  try {
    const { rows } = await db.query(db.sql.sendSignal, values, (error) => {
      if (uniqueViolation(error) !== undefined) throw duplicate;
      return undefined;
    });
    sent = readSignal(rows[0]!);
  } catch (error) {
    if (error !== duplicate) throw error;
    const { rows } = await db.query(db.sql.getSignal, [signal.id]);
    return { outcome: 'duplicate', signal: readSignal(rows[0]!) };
  }
  return { outcome: sent.consumedAt === null ? 'kept' : 'delivered', signal: sent };
}

export async function matchSignal(
  db: PgConnection,
  wait: EventWait,
  at: number,
): Promise<SignalRecord | undefined> {
  const { runId, requestId, graph, name, key } = wait;
  const { rows } = await db.query(db.sql.matchSignal, [runId, requestId, graph, name, key, at]);
  return rows[0] === undefined ? undefined : readSignal(rows[0]);
}

export async function redeliverSignal(
  db: PgConnection,
  id: string,
  at: number,
): Promise<SignalRecord | undefined> {
  const { rows } = await db.query(db.sql.redeliverSignal, [id, at]);
  return rows[0] === undefined ? undefined : readSignal(rows[0]);
}

export async function listSignals(
  db: PgConnection,
  filter: SignalFilter = {},
): Promise<SignalRecord[]> {
  const { rows } = await db.query(db.sql.listSignals, [
    filter.graph ?? null,
    filter.runId ?? null,
    filter.state ?? null,
    filter.at ?? Date.now(),
  ]);
  return rows.map(readSignal);
}

export async function expireSignals(db: PgConnection, at: number): Promise<number> {
  const result = await db.query(db.sql.expireSignals, [at]);
  return result.rowCount ?? 0;
}
