import type { Schedule } from './runtime/schedule/schedule.js';
import type { ScheduleJson } from './runtime/schedule/schedule-json.js';
import type { CatchUpPolicy, OverlapPolicy } from './store/schedule-store.js';

// `client.schedules`: the /schedules routes of `waymark serve`, each schedule with its times in
// ms since the epoch, as getSchedule() gives them.

/** What a call of the API takes: method, path and body, and the JSON answer. */
type Call = <T>(method: string, path: string, body?: unknown) => Promise<T>;

/** What `client.schedules.add` takes: `schedule()`'s options, and the graph by name. */
export interface ScheduleRequest {
  readonly graph: string;
  readonly cron: string;
  readonly timezone?: string;
  readonly input?: unknown;
  readonly id?: string;
  readonly overlap?: OverlapPolicy;
  readonly catchUp?: CatchUpPolicy;
}

/** The schedules of the server's graphs. Errors: `SCHEDULE_INVALID`, `SCHEDULE_NOT_FOUND`, `GRAPH_NOT_SERVED`. */
export interface ClientSchedules {
  list(): Promise<Schedule[]>;
  get(id: string): Promise<Schedule>;
  add(request: ScheduleRequest): Promise<Schedule>;
  pause(id: string): Promise<Schedule>;
  resume(id: string): Promise<Schedule>;
  remove(id: string): Promise<void>;
}

/** The client's schedules over `call`. */
export function clientSchedules(call: Call): ClientSchedules {
  const at = (id: string) => `/schedules/${encodeURIComponent(id)}`;
  return {
    list: async () =>
      (await call<{ schedules: ScheduleJson[] }>('GET', '/schedules')).schedules.map(scheduleOf),
    get: async (id) => scheduleOf(await call('GET', at(id))),
    add: async (request) => scheduleOf(await call('POST', '/schedules', request)),
    pause: async (id) => scheduleOf(await call('POST', `${at(id)}/pause`)),
    resume: async (id) => scheduleOf(await call('POST', `${at(id)}/resume`)),
    remove: async (id) => {
      await call('DELETE', at(id));
    },
  };
}

const ms = (iso: string | null) => (iso === null ? null : Date.parse(iso));

function scheduleOf(s: ScheduleJson): Schedule {
  return {
    ...s,
    nextAt: ms(s.nextAt),
    bufferedAt: ms(s.bufferedAt),
    lastTickAt: ms(s.lastTickAt),
    createdAt: Date.parse(s.createdAt),
    updatedAt: Date.parse(s.updatedAt),
    // Not on the wire: a schedule's revision is the store's business.
    revision: 0,
  };
}
