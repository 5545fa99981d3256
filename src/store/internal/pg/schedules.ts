// The schedules on PostgreSQL (ScheduleStore in schedule-store.ts); the SQL is in pg-schedules-sql.ts.

import type { NewSchedule, ScheduleRecord, ScheduleState } from '../../schedule-store.js';
import { readSchedule } from '../schedule-rows.js';
import type { PgConnection } from './connection.js';

export async function putSchedule(db: PgConnection, s: NewSchedule): Promise<ScheduleRecord> {
  const { rows } = await db.query(db.sql.putSchedule, [
    s.id,
    s.graph,
    s.cron,
    s.timezone,
    s.input,
    s.overlap,
    s.catchUp,
    s.nextAt,
  ]);
  return readSchedule(rows[0]);
}

export async function getSchedule(
  db: PgConnection,
  id: string,
): Promise<ScheduleRecord | undefined> {
  const { rows } = await db.query(db.sql.getSchedule, [id]);
  return rows[0] === undefined ? undefined : readSchedule(rows[0]);
}

export async function listSchedules(
  db: PgConnection,
  graphs?: readonly string[],
): Promise<ScheduleRecord[]> {
  const { rows } = await db.query(db.sql.listSchedules, [graphs ?? null]);
  return rows.map(readSchedule);
}

export async function changeSchedule(
  db: PgConnection,
  id: string,
  revision: number,
  state: ScheduleState,
): Promise<ScheduleRecord | undefined> {
  const { rows } = await db.query(db.sql.changeSchedule, [
    id,
    revision,
    state.nextAt,
    state.bufferedAt,
    state.lastTickAt,
    state.lastRunId,
    state.paused,
  ]);
  return rows[0] === undefined ? undefined : readSchedule(rows[0]);
}

export async function removeSchedule(db: PgConnection, id: string): Promise<boolean> {
  const { rowCount } = await db.query(db.sql.removeSchedule, [id]);
  return (rowCount ?? 0) > 0;
}

export async function dueSchedules(
  db: PgConnection,
  graphs: readonly string[],
  at: number,
  limit?: number,
): Promise<ScheduleRecord[]> {
  const { rows } = await db.query(db.sql.dueSchedules, [graphs, at, limit ?? null]);
  return rows.map(readSchedule);
}

export async function nextScheduleAt(
  db: PgConnection,
  graphs: readonly string[],
  after: number,
): Promise<number | undefined> {
  const { rows } = await db.query(db.sql.nextScheduleAt, [graphs, after]);
  const next = rows[0]?.next;
  return next === null || next === undefined ? undefined : Number(next);
}
