import { WaymarkError } from '../../error/waymark-error.js';
import {
  getSchedule,
  listSchedules,
  pauseSchedule,
  removeSchedule,
  resumeSchedule,
  type Schedule,
  schedule,
} from '../../runtime/schedule/schedule.js';
import { scheduleJson } from '../../runtime/schedule/schedule-json.js';
import {
  type CatchUpPolicy,
  catchUpPolicies,
  type OverlapPolicy,
  overlapPolicies,
} from '../../store/schedule-store.js';
import { exitCode } from '../exit-code.js';
import type { Io } from '../io.js';
import { loadGraph } from '../load-graph.js';
import { parseJson, withExistingStore, withStore } from '../session.js';

/** `waymark schedule add <graph-file> --cron <expr>`: stores a schedule; hosts of the graph tick it. */
export async function add(
  out: Io,
  file: string,
  flags: {
    readonly cron: string;
    readonly timezone: string;
    readonly input?: string;
    readonly id?: string;
    readonly overlap: string;
    readonly catchUp: string;
  },
): Promise<number> {
  const overlap = oneOf(flags.overlap, overlapPolicies, '--overlap') as OverlapPolicy;
  const catchUp = oneOf(flags.catchUp, catchUpPolicies, '--catch-up') as CatchUpPolicy;
  const input = flags.input === undefined ? {} : parseJson(flags.input, '--input');
  out.about.graphFile = file;
  const { graph, path } = await loadGraph(file);
  out.about.graphFile = path;
  const s = await withStore(out, 'create', (store) =>
    schedule(store, graph, {
      cron: flags.cron,
      timezone: flags.timezone,
      input: input as never,
      overlap,
      catchUp,
      ...(flags.id !== undefined && { id: flags.id }),
    }),
  );
  out.json({ type: 'schedule', schedule: scheduleJson(s) });
  out.line(`schedule ${s.id}: ${describe(s)}`);
  return exitCode.succeeded;
}

/** `waymark schedule ls`: every schedule, by id, with its next and last runs. */
export async function ls(out: Io, flags: { readonly graph?: string }): Promise<number> {
  const found = await withExistingStore(out, (store) =>
    listSchedules(store, flags.graph === undefined ? {} : { graph: flags.graph }),
  );
  const schedules = found?.value ?? [];
  out.json({ type: 'schedules', schedules: schedules.map(scheduleJson) });
  if (schedules.length === 0) out.line('no schedules');
  for (const s of schedules) out.line(`${s.id}  ${describe(s)}`);
  return exitCode.succeeded;
}

/** `waymark schedule pause <id>`. */
export async function pause(out: Io, id: string): Promise<number> {
  const s = await withExistingSchedule(out, id, (store) => pauseSchedule(store, id));
  out.json({ type: 'schedule', schedule: scheduleJson(s) });
  out.line(
    `schedule ${s.id} paused: no tick starts a run until \`waymark schedule resume ${s.id}\``,
  );
  return exitCode.succeeded;
}

/** `waymark schedule resume <id>`: ticks go on from now; those it was paused for are not caught up. */
export async function resume(out: Io, id: string): Promise<number> {
  const s = await withExistingSchedule(out, id, (store) => resumeSchedule(store, id));
  out.json({ type: 'schedule', schedule: scheduleJson(s) });
  out.line(`schedule ${s.id}: ${describe(s)}`);
  return exitCode.succeeded;
}

/** `waymark schedule rm <id>`: the schedule goes; the runs it started stay. */
export async function rm(out: Io, id: string): Promise<number> {
  await withExistingSchedule(out, id, async (store) => {
    await getSchedule(store, id);
    await removeSchedule(store, id);
  });
  out.json({ type: 'schedule-removed', id });
  out.line(`schedule ${id} removed (the runs it started stay)`);
  return exitCode.succeeded;
}

/** With no database there is no such schedule, and none is created just to say so. */
async function withExistingSchedule<T>(
  out: Io,
  id: string,
  use: Parameters<typeof withExistingStore<T>>[1],
): Promise<T> {
  const found = await withExistingStore(out, use);
  if (found === undefined)
    throw new WaymarkError('SCHEDULE_NOT_FOUND', `there is no schedule "${id}": no database`, {
      retryable: false,
      details: { id },
    });
  return found.value;
}

function describe(s: Schedule): string {
  const next = s.paused ? 'paused' : s.nextAt === null ? 'fires no more' : `next ${iso(s.nextAt)}`;
  const last = s.lastRunId === null ? 'no run yet' : `last run ${s.lastRunId}`;
  return `${s.graph}  "${s.cron}" ${s.timezone}  ${next}  ${last}`;
}

const iso = (ms: number) => new Date(ms).toISOString();

function oneOf(value: string, allowed: readonly string[], option: string): string {
  if (allowed.includes(value)) return value;
  throw new WaymarkError('USAGE_INVALID', `${option} ${value}: use one of ${allowed.join(', ')}`, {
    retryable: false,
  });
}
