import type { CompiledGraph } from '../../graph/compiled.js';
import type { ScheduleRecord, ScheduleState } from '../../store/schedule-store.js';
import type { Store } from '../../store/store.js';
import { cronTimes } from './cron.js';
import { stateOf } from './schedule.js';

// How a tick starts exactly one run (docs/time.md#schedules). The run a tick starts has the id
// `sched:<schedule id>:<tick as ISO time>`, and it is started BEFORE the tick is taken: a host
// killed between the two leaves the tick due, and the next host that looks starts the same id,
// which exists already (a no-op), then takes the tick. Taking it is a compare-and-set of the
// schedule's row on the revision read (ScheduleStore.changeSchedule), so of two hosts that read
// the same tick, one moves it on and the other finds the row moved: neither a crash nor a race
// makes a second run of one tick.

/** With catchUp `none`, a tick is missed when the host finds it later than this. */
export const onTimeMs = 60_000;

/** How many ticks one schedule takes in one look (catchUp `all` after a long downtime). */
const ticksPerLook = 100;

/** What a host gives the ticks: its store, the graphs it hosts, its clock, and how it starts a run. */
export interface TickHost {
  readonly store: Store;
  readonly graphs: ReadonlyMap<string, CompiledGraph>;
  readonly now: () => number;
  /**
   * Makes sure the run `runId` of `graph` exists with `input` and will be driven: records it
   * (the id existing already is no error) and drives it or leaves it to the workers.
   */
  readonly start: (graph: CompiledGraph, input: unknown, runId: string) => Promise<void>;
}

/** The id of the run a schedule's tick starts. */
export function tickRunId(scheduleId: string, tickAt: number): string {
  return `sched:${scheduleId}:${new Date(tickAt).toISOString()}`;
}

/**
 * Takes every due tick of the host's graphs' schedules (at most `limit` schedules a look).
 * A schedule whose tick fails (a store down for a moment) is left due for the next look.
 *
 * @example
 * await tickDue({ store, graphs, now: () => Date.now(), start });
 */
export async function tickDue(
  host: TickHost,
  limit = 100,
  onError: (error: unknown) => void = () => {},
): Promise<void> {
  const due = await host.store.dueSchedules([...host.graphs.keys()], host.now(), limit);
  for (const s of due) await tickSchedule(host, s).catch(onError);
}

/** Takes the due ticks of one schedule, one at a time, until none is due or another host came first. */
export async function tickSchedule(host: TickHost, schedule: ScheduleRecord): Promise<void> {
  let s: ScheduleRecord | undefined = schedule;
  for (let i = 0; i < ticksPerLook && s !== undefined; i++) {
    const next = await nextState(host, s);
    if (next === undefined) return;
    s = await host.store.changeSchedule(s.id, s.revision, next);
  }
}

/** What taking the schedule's next due thing writes (having started its run), or undefined. */
async function nextState(host: TickHost, s: ScheduleRecord): Promise<ScheduleState | undefined> {
  const graph = host.graphs.get(s.graph);
  if (graph === undefined || s.paused) return undefined;
  const state = stateOf(s);
  if (s.bufferedAt !== null && !(await live(host.store, s.lastRunId))) {
    const runId = tickRunId(s.id, s.bufferedAt);
    await host.start(graph, JSON.parse(s.input), runId);
    return { ...state, bufferedAt: null, lastRunId: runId };
  }
  const now = host.now();
  if (s.nextAt === null || s.nextAt > now) return undefined;
  const times = cronTimes(s.cron, s.timezone);
  const tick = tickToTake(s, times.latestAt(now) ?? s.nextAt, now);
  const following = times.after(Math.max(tick ?? now, s.nextAt));
  if (tick === undefined) return { ...state, nextAt: times.after(now) };
  const runId = tickRunId(s.id, tick);
  // A run of this tick started by a host killed before it took the tick: take it as started.
  const started = (await host.store.getRun(runId)) !== undefined;
  if (!started && s.overlap !== 'allow' && (await live(host.store, s.lastRunId))) {
    if (s.overlap === 'skip') return { ...state, nextAt: following, lastTickAt: tick };
    return { ...state, nextAt: following, lastTickAt: tick, bufferedAt: s.bufferedAt ?? tick };
  }
  await host.start(graph, JSON.parse(s.input), runId);
  return { ...state, nextAt: following, lastTickAt: tick, lastRunId: runId };
}

/**
 * Which due tick starts now: the next one (`all`, or any tick found before the one after it
 * came due); the latest one due (`latest`); or, with `none`, the latest if it is on time.
 */
function tickToTake(s: ScheduleRecord, latest: number, now: number): number | undefined {
  const nextAt = s.nextAt!;
  if (s.catchUp === 'all' || latest <= nextAt) {
    return s.catchUp === 'none' && now - nextAt > onTimeMs ? undefined : nextAt;
  }
  if (s.catchUp === 'latest') return latest;
  return now - latest > onTimeMs ? undefined : latest;
}

/** Whether the run is running or waiting. */
async function live(store: Store, runId: string | null): Promise<boolean> {
  if (runId === null) return false;
  const run = await store.getRun(runId);
  return run?.status === 'running' || run?.status === 'waiting';
}
