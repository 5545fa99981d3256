/**
 * Schedules as the stores keep them: a cron expression, the input of the runs it starts, and
 * when it next fires. Stores see encoded data only (the input as JSON, times as ms since the
 * epoch); what a cron expression means and when a tick starts a run is the runtime's
 * (src/runtime/schedule/). The one guarantee a store gives is the compare-and-set of
 * `changeSchedule`: a tick is taken by moving `nextAt` on under the revision it was read at,
 * so of any number of hosts that read the same tick, one moves it.
 */

/** What a tick does while the schedule's previous run is still live. */
export const overlapPolicies = ['skip', 'buffer-one', 'allow'] as const;
export type OverlapPolicy = (typeof overlapPolicies)[number];

/** What a host does with the ticks that came due while no host looked (docs/time.md#schedules). */
export const catchUpPolicies = ['none', 'latest', 'all'] as const;
export type CatchUpPolicy = (typeof catchUpPolicies)[number];

/** A schedule's row. */
export interface ScheduleRecord {
  readonly id: string;
  /** The graph's name: hosts of that graph tick it. */
  readonly graph: string;
  readonly cron: string;
  /** IANA time zone the cron expression is read in. */
  readonly timezone: string;
  /** JSON of the input each run starts with. */
  readonly input: string;
  readonly overlap: OverlapPolicy;
  readonly catchUp: CatchUpPolicy;
  readonly paused: boolean;
  /** When the next tick is due (ms since the epoch); null: the expression fires no more. */
  readonly nextAt: number | null;
  /** A tick kept by `buffer-one` until the previous run ends; null: none. */
  readonly bufferedAt: number | null;
  /** The last tick taken (started, skipped or buffered), and the last run a tick started. */
  readonly lastTickAt: number | null;
  readonly lastRunId: string | null;
  /** Bumped by every write: what `changeSchedule` compares. */
  readonly revision: number;
  readonly createdAt: number;
  readonly updatedAt: number;
}

/** What `putSchedule` writes: the definition, and when it first fires. */
export type NewSchedule = Pick<
  ScheduleRecord,
  'id' | 'graph' | 'cron' | 'timezone' | 'input' | 'overlap' | 'catchUp' | 'nextAt'
>;

/** What ticks, pauses and resumes change: the whole of it, written under a revision. */
export type ScheduleState = Pick<
  ScheduleRecord,
  'nextAt' | 'bufferedAt' | 'lastTickAt' | 'lastRunId' | 'paused'
>;

/** The schedules of a store. Times of `createdAt` and `updatedAt` are the store's clock's. */
export interface ScheduleStore {
  /**
   * Creates the schedule, or replaces the definition of the one with its id (revision + 1),
   * which keeps its paused flag, its buffered tick and its last tick and run.
   */
  putSchedule(schedule: NewSchedule): Promise<ScheduleRecord>;
  getSchedule(id: string): Promise<ScheduleRecord | undefined>;
  /** Every schedule, or those of these graphs, by id. */
  listSchedules(graphs?: readonly string[]): Promise<ScheduleRecord[]>;
  /**
   * Writes `state` if the schedule is still at `revision` (then at revision + 1), and returns
   * the row written; undefined if another write came first or the schedule is gone.
   */
  changeSchedule(
    id: string,
    revision: number,
    state: ScheduleState,
  ): Promise<ScheduleRecord | undefined>;
  /** Deletes the schedule (its runs stay); whether there was one. */
  removeSchedule(id: string): Promise<boolean>;
  /**
   * Unpaused schedules of these graphs with a tick due at or before `at`, or a buffered tick:
   * soonest first, at most `limit`. One indexed read, whatever the number of schedules.
   */
  dueSchedules(graphs: readonly string[], at: number, limit?: number): Promise<ScheduleRecord[]>;
  /** When the soonest unpaused schedule of these graphs is due after `after`, if any is. */
  nextScheduleAt(graphs: readonly string[], after: number): Promise<number | undefined>;
}
