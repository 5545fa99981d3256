import { createHash } from 'node:crypto';
import { isWaymarkError, WaymarkError } from '../../error/waymark-error.js';
import type { CompiledGraph } from '../../graph/compiled.js';
import { startState } from '../../graph/run-input.js';
import {
  type CatchUpPolicy,
  catchUpPolicies,
  type OverlapPolicy,
  overlapPolicies,
  type ScheduleRecord,
  type ScheduleState,
} from '../../store/schedule-store.js';
import type { Store } from '../../store/store.js';
import { type Clock, systemClock } from '../clock.js';
import { cronTimes } from './cron.js';

/** Options of {@link schedule}. */
export interface ScheduleOptions<I = unknown> {
  /**
   * The schedule's id. Default: the graph's name and a hash of the cron expression, time zone
   * and input, so declaring the same schedule again (a host that declares it at every start)
   * is the same schedule, not a second one.
   */
  readonly id?: string;
  /** A cron expression of 5 fields (6 with seconds first), read by croner. */
  readonly cron: string;
  /** The IANA time zone the expression is read in, DST included. Default `UTC`. */
  readonly timezone?: string;
  /** The input of every run a tick starts, checked by the graph's input schema now. */
  readonly input: I;
  /** While the previous run is live: `skip` the tick (default), `buffer-one`, or `allow` it. */
  readonly overlap?: OverlapPolicy;
  /** Ticks missed while no host ran: `latest` (default) starts the last one, `all` each, `none` none. */
  readonly catchUp?: CatchUpPolicy;
  /** When "now" is, for the first tick. Default: the system clock. */
  readonly clock?: Clock;
}

/** A schedule as stored, with its input decoded. Times are ms since the epoch. */
export type Schedule = Omit<ScheduleRecord, 'input'> & { readonly input: unknown };

/**
 * Stores a schedule: each tick of `cron` starts one run of `graph` with `input`, on whichever
 * host (a `Worker`, `waymark serve`) hosts the graph, however many there are. The same id
 * again replaces the definition (an unchanged one is left as it is, its next tick included).
 * @throws WaymarkError `SCHEDULE_INVALID`: a cron expression or time zone croner refuses, an
 *   input the graph's schema refuses (the cause says why), an unknown overlap or catch-up.
 *
 * @example
 * await schedule(store, report, { cron: '0 9 * * 1-5', timezone: 'Europe/Berlin', input: { team: 'sales' } });
 */
export async function schedule<S, I, O>(
  store: Store,
  graph: CompiledGraph<S, I, O>,
  options: ScheduleOptions<I>,
): Promise<Schedule> {
  const timezone = options.timezone ?? 'UTC';
  const overlap = options.overlap ?? 'skip';
  const catchUp = options.catchUp ?? 'latest';
  if (!overlapPolicies.includes(overlap) || !catchUpPolicies.includes(catchUp))
    throw invalid(
      `overlap must be one of ${overlapPolicies.join(', ')} and catchUp one of ${catchUpPolicies.join(', ')}`,
      { overlap, catchUp },
    );
  if (typeof options.cron !== 'string') throw invalid('cron must be a string', {});
  const times = cronTimes(options.cron, timezone);
  const input = checkedInput(graph as CompiledGraph, options.input);
  const id = options.id ?? defaultId(graph.name, options.cron, timezone, input);
  if (typeof id !== 'string' || id === '' || /[\s]/.test(id))
    throw invalid(`schedule id "${id}" must be a non-empty string without spaces`, { id });
  const definition = {
    id,
    graph: graph.name,
    cron: options.cron,
    timezone,
    input,
    overlap,
    catchUp,
  };
  const before = await store.getSchedule(id);
  if (before !== undefined && sameDefinition(before, definition)) return decoded(before);
  const now = (options.clock ?? systemClock).now();
  return decoded(await store.putSchedule({ ...definition, nextAt: times.after(now) }));
}

/**
 * The schedule `id`.
 * @throws WaymarkError `SCHEDULE_NOT_FOUND`.
 * @example
 * const { nextAt, lastRunId } = await getSchedule(store, 'report:1f2e3d4c');
 */
export async function getSchedule(store: Store, id: string): Promise<Schedule> {
  return decoded(await found(store, id));
}

/**
 * Every schedule, or those of one graph, by id.
 * @example
 * for (const s of await listSchedules(store, { graph: 'report' })) console.log(s.id, s.nextAt);
 */
export async function listSchedules(
  store: Store,
  filter: { readonly graph?: string } = {},
): Promise<Schedule[]> {
  const rows = await store.listSchedules(filter.graph === undefined ? undefined : [filter.graph]);
  return rows.map(decoded);
}

/**
 * Pauses the schedule: no tick starts a run until it is resumed. Pausing a paused one is a no-op.
 * @throws WaymarkError `SCHEDULE_NOT_FOUND`.
 * @example
 * await pauseSchedule(store, 'nightly');
 */
export async function pauseSchedule(store: Store, id: string): Promise<Schedule> {
  return decoded(await changed(store, id, (s) => ({ paused: true, nextAt: s.nextAt })));
}

/**
 * Resumes a paused schedule from now: the ticks that fell while it was paused are not caught
 * up (they were paused, not missed). Resuming one that is not paused is a no-op.
 * @throws WaymarkError `SCHEDULE_NOT_FOUND`.
 * @example
 * await resumeSchedule(store, 'nightly');
 */
export async function resumeSchedule(
  store: Store,
  id: string,
  options: { readonly clock?: Clock } = {},
): Promise<Schedule> {
  return decoded(
    await changed(store, id, (s) =>
      s.paused
        ? {
            paused: false,
            nextAt: cronTimes(s.cron, s.timezone).after((options.clock ?? systemClock).now()),
          }
        : { paused: false, nextAt: s.nextAt },
    ),
  );
}

/**
 * Deletes the schedule; the runs it started stay.
 * @throws WaymarkError `SCHEDULE_NOT_FOUND`.
 * @example
 * await removeSchedule(store, 'nightly');
 */
export async function removeSchedule(store: Store, id: string): Promise<void> {
  if (!(await store.removeSchedule(id))) throw notFound(id);
}

/** The schedule with `change` applied under the revision read; read again if a tick came first. */
async function changed(
  store: Store,
  id: string,
  change: (s: ScheduleRecord) => Pick<ScheduleState, 'paused' | 'nextAt'>,
): Promise<ScheduleRecord> {
  for (;;) {
    const s = await found(store, id);
    const next = change(s);
    if (next.paused === s.paused && next.nextAt === s.nextAt) return s;
    const written = await store.changeSchedule(id, s.revision, { ...stateOf(s), ...next });
    if (written !== undefined) return written;
  }
}

/** What of a schedule its ticks change, as it stands. */
export function stateOf(s: ScheduleRecord): ScheduleState {
  return {
    nextAt: s.nextAt,
    bufferedAt: s.bufferedAt,
    lastTickAt: s.lastTickAt,
    lastRunId: s.lastRunId,
    paused: s.paused,
  };
}

async function found(store: Store, id: string): Promise<ScheduleRecord> {
  const s = await store.getSchedule(id);
  if (s === undefined) throw notFound(id);
  return s;
}

function notFound(id: string): WaymarkError {
  return new WaymarkError('SCHEDULE_NOT_FOUND', `there is no schedule "${id}"`, {
    retryable: false,
    details: { id },
  });
}

function invalid(message: string, details: Record<string, unknown>, cause?: unknown) {
  return new WaymarkError('SCHEDULE_INVALID', message, {
    retryable: false,
    details,
    ...(cause !== undefined && { cause }),
  });
}

/** The input as JSON, checked as each tick's run will read it back: after a JSON round trip. */
function checkedInput(graph: CompiledGraph, input: unknown): string {
  let json: string | undefined;
  try {
    json = JSON.stringify(input ?? {});
  } catch (error) {
    throw invalid(`the input of a schedule of "${graph.name}" is not JSON`, {}, error);
  }
  try {
    startState(graph, JSON.parse(json!));
  } catch (error) {
    if (!isWaymarkError(error)) throw error;
    throw invalid(
      `the input of a schedule of "${graph.name}" is refused: ${error.message}`,
      { graph: graph.name, refused: error.code },
      error,
    );
  }
  return json!;
}

function defaultId(graph: string, cron: string, timezone: string, input: string): string {
  const hash = createHash('sha256').update(`${cron}\n${timezone}\n${input}`).digest('hex');
  return `${graph}:${hash.slice(0, 8)}`;
}

function sameDefinition(
  s: ScheduleRecord,
  d: Pick<ScheduleRecord, 'graph' | 'cron' | 'timezone' | 'input' | 'overlap' | 'catchUp'>,
): boolean {
  return (
    s.graph === d.graph &&
    s.cron === d.cron &&
    s.timezone === d.timezone &&
    s.input === d.input &&
    s.overlap === d.overlap &&
    s.catchUp === d.catchUp
  );
}

/** The schedule with its input decoded. */
export function decoded(s: ScheduleRecord): Schedule {
  return { ...s, input: JSON.parse(s.input) as unknown };
}
