import type { Schedule } from './schedule.js';

/** A schedule as `waymark schedule --json` and the HTTP API show it: times as ISO strings. */
export interface ScheduleJson {
  readonly id: string;
  readonly graph: string;
  readonly cron: string;
  readonly timezone: string;
  readonly input: unknown;
  readonly overlap: Schedule['overlap'];
  readonly catchUp: Schedule['catchUp'];
  readonly paused: boolean;
  readonly nextAt: string | null;
  readonly bufferedAt: string | null;
  readonly lastTickAt: string | null;
  readonly lastRunId: string | null;
  readonly createdAt: string;
  readonly updatedAt: string;
}

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/**
 * The schedule as JSON shows it.
 * @example
 * scheduleJson(await getSchedule(store, 'nightly')).nextAt; // '2026-03-03T02:00:00.000Z'
 */
export function scheduleJson(s: Schedule): ScheduleJson {
  return {
    id: s.id,
    graph: s.graph,
    cron: s.cron,
    timezone: s.timezone,
    input: s.input,
    overlap: s.overlap,
    catchUp: s.catchUp,
    paused: s.paused,
    nextAt: iso(s.nextAt),
    bufferedAt: iso(s.bufferedAt),
    lastTickAt: iso(s.lastTickAt),
    lastRunId: s.lastRunId,
    createdAt: iso(s.createdAt)!,
    updatedAt: iso(s.updatedAt)!,
  };
}
