// Effects, waits and memos on PostgreSQL (EffectStore, WaitStore, MemoStore in store.ts).

import { storeCorrupt } from '../../../error/store-corrupt.js';
import { WaymarkError } from '../../../error/waymark-error.js';
import type { EffectRecord, MemoRecord, WaitRecord } from '../../store.js';
import { readEffect, readMemo, readWait } from '../rows.js';
import { waitClosed } from '../waits.js';
import type { PgConnection } from './connection.js';
import { runNotFound } from './run-log.js';

export async function recordEffect(db: PgConnection, effect: EffectRecord): Promise<EffectRecord> {
  const { runId, key, result, at } = effect;
  const { rows } = await db.query(db.sql.recordEffect, [runId, key, result, at]);
  if (rows[0] === undefined) throw runNotFound(runId);
  if (rows[0].key !== null) return readEffect(rows[0], runId);
  // Another call recorded it first; this statement, started before it committed, could not
  // see its row, the next one does.
  const stands = await getEffect(db, runId, key);
  if (stands === undefined) throw storeCorrupt(runId, `its effect "${key}" vanished`, { key });
  return stands;
}

export async function getEffect(
  db: PgConnection,
  runId: string,
  key: string,
): Promise<EffectRecord | undefined> {
  const { rows } = await db.query(db.sql.getEffect, [runId, key]);
  if (rows[0] === undefined) throw runNotFound(runId);
  return rows[0].key === null ? undefined : readEffect(rows[0], runId);
}

export async function listEffects(db: PgConnection, runId: string): Promise<EffectRecord[]> {
  const { rows } = await db.query(db.sql.listEffects, [runId]);
  if (rows[0] === undefined) throw runNotFound(runId);
  return rows.filter((row) => row.key !== null).map((row) => readEffect(row, runId));
}

export async function openWait(db: PgConnection, wait: WaitRecord): Promise<void> {
  const { rows } = await db.query(db.sql.openWait, [
    wait.runId,
    wait.requestId,
    wait.node,
    wait.activation,
    wait.request,
    wait.openedAt,
    wait.answer,
    wait.answeredBy,
    wait.answeredAt,
    wait.closedAt ?? null,
  ]);
  // Opening the same request again (a replayed step) keeps the first record and its answer.
  if (rows.length === 0) throw runNotFound(wait.runId);
}

export async function answerWait(
  db: PgConnection,
  runId: string,
  requestId: string,
  answer: string,
  by: string,
  at: number,
): Promise<WaitRecord> {
  const answered = await db.query(db.sql.answerWait, [runId, requestId, answer, by, at]);
  if (answered.rows[0] !== undefined) return readWait(answered.rows[0], runId);
  const { rows } = await db.query(db.sql.getWait, [runId, requestId]);
  if (rows[0] === undefined) throw runNotFound(runId);
  if (rows[0].request_id === null) {
    throw new WaymarkError('WAIT_NOT_FOUND', `run "${runId}" has no wait "${requestId}"`, {
      retryable: false,
    });
  }
  const record = readWait(rows[0], runId);
  if (record.answer === null && record.closedAt) throw waitClosed(runId, requestId);
  throw new WaymarkError(
    'WAIT_ALREADY_ANSWERED',
    `wait "${requestId}" of run "${runId}" was answered by ${record.answeredBy} already`,
    { retryable: false },
  );
}

export async function listWaits(
  db: PgConnection,
  runId: string,
  options: { readonly open?: boolean } = {},
): Promise<WaitRecord[]> {
  const { rows } = await db.query(db.sql.listWaits, [runId, options.open ?? null]);
  if (rows.length === 0) throw runNotFound(runId);
  return rows.filter((row) => row.request_id !== null).map((row) => readWait(row, runId));
}

export async function putMemo(db: PgConnection, memo: MemoRecord): Promise<void> {
  await db.query(db.sql.putMemo, [
    memo.graph,
    memo.node,
    memo.nodeVersion,
    memo.inputHash,
    memo.output,
    memo.runId,
    memo.activation,
    memo.at,
  ]);
}

export async function findMemo(
  db: PgConnection,
  graph: string,
  node: string,
  nodeVersion: number,
  inputHash: string,
): Promise<MemoRecord | undefined> {
  const { rows } = await db.query(db.sql.findMemo, [graph, node, nodeVersion, inputHash]);
  return rows[0] === undefined ? undefined : readMemo(rows[0]);
}

/** Forgets a graph's memos, or one node's; how many. */
export async function clearMemos(db: PgConnection, graph: string, node?: string): Promise<number> {
  const { rowCount } = await db.query(db.sql.clearMemos, [graph, node ?? null]);
  return rowCount ?? 0;
}
