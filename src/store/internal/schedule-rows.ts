import type { CatchUpPolicy, OverlapPolicy, ScheduleRecord } from '../schedule-store.js';

/** A schedule's row as SQLite or PostgreSQL return it (numbers may come as strings). */
export function readSchedule(row: unknown): ScheduleRecord {
  const r = row as Record<string, unknown>;
  const orNull = (v: unknown) => (v === null || v === undefined ? null : Number(v));
  return {
    id: String(r.id),
    graph: String(r.graph),
    cron: String(r.cron),
    timezone: String(r.timezone),
    input: String(r.input),
    overlap: String(r.overlap) as OverlapPolicy,
    catchUp: String(r.catch_up) as CatchUpPolicy,
    paused: r.paused === true || r.paused === 1,
    nextAt: orNull(r.next_at),
    bufferedAt: orNull(r.buffered_at),
    lastTickAt: orNull(r.last_tick_at),
    lastRunId: r.last_run_id === null || r.last_run_id === undefined ? null : String(r.last_run_id),
    revision: Number(r.revision),
    createdAt: Number(r.created_at),
    updatedAt: Number(r.updated_at),
  };
}
