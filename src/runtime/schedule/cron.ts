import { Cron } from 'croner';
import { WaymarkError } from '../../error/waymark-error.js';

// Cron expressions, time zones and DST are croner's (a maintained library): this file only
// turns its answers into ms since the epoch and its refusals into SCHEDULE_INVALID.

/** A cron expression read in a time zone: when it fires after a time. */
export interface CronTimes {
  /** The first tick strictly after `after`; null when the expression fires no more. */
  after(after: number): number | null;
  /** The last tick at or before `at`; null when none is. */
  latestAt(at: number): number | null;
}

/**
 * Reads `cron` (5 fields, or 6 with seconds) in the IANA zone `timezone`.
 * @throws WaymarkError `SCHEDULE_INVALID` naming what croner refused.
 *
 * @example
 * cronTimes('0 9 * * 1-5', 'Europe/Berlin').after(Date.now()); // the next weekday at 9:00 there
 */
export function cronTimes(cron: string, timezone: string): CronTimes {
  let job: Cron;
  try {
    job = new Cron(cron, { timezone, paused: true });
    // An unknown zone is found only when a time is converted into it.
    job.nextRun(new Date(0));
  } catch (error) {
    throw new WaymarkError(
      'SCHEDULE_INVALID',
      `cron "${cron}" in time zone "${timezone}" cannot be read: ${(error as Error).message}`,
      { retryable: false, details: { cron, timezone }, cause: error },
    );
  }
  return {
    after: (after) => job.nextRun(new Date(after))?.getTime() ?? null,
    latestAt: (at) => job.previousRuns(1, new Date(at + 1))[0]?.getTime() ?? null,
  };
}
