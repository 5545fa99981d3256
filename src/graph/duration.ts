import { WaymarkError } from '../error/waymark-error.js';

/** A length of time: milliseconds, or a number and a unit (`'90s'`, `'15m'`, `'2d'`, `'1.5h'`). */
export type Duration = number | `${number}${DurationUnit}`;

/** The units a duration string may use: milliseconds, seconds, minutes, hours, days, weeks. */
export type DurationUnit = 'ms' | 's' | 'm' | 'h' | 'd' | 'w';

const unitMs: Readonly<Record<DurationUnit, number>> = {
  ms: 1,
  s: 1_000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  w: 604_800_000,
};

// One number and one unit, nothing else: '1h30m' or '2 days' are refused rather than guessed.
const form = /^(\d+(?:\.\d+)?)(ms|s|m|h|d|w)$/;

/**
 * A duration in whole milliseconds: a number is taken as milliseconds, a string is one number
 * and one unit (`ms`, `s`, `m`, `h`, `d`, `w`; a day is 24 hours, no calendar). Decision: a
 * dozen lines beat a dependency for this, and a form this narrow cannot be misread.
 * @throws WaymarkError `DECLARATION_INVALID` for anything else, or a negative or endless length.
 *
 * @example
 * parseDuration('2d'); // 172_800_000
 * parseDuration('90s'); // 90_000
 * parseDuration(250); // 250
 */
export function parseDuration(duration: Duration | string, what = 'a duration'): number {
  const match = typeof duration === 'string' ? form.exec(duration.trim()) : null;
  const ms =
    typeof duration === 'number'
      ? duration
      : match === null
        ? Number.NaN
        : Number(match[1]) * unitMs[match[2] as DurationUnit];
  if (!(Number.isFinite(ms) && ms >= 0)) {
    throw new WaymarkError(
      'DECLARATION_INVALID',
      `${what} of ${JSON.stringify(duration)} is not a length of time: give milliseconds (a number >= 0) or a number and one unit of ms, s, m, h, d, w (e.g. '90s', '2d')`,
      { retryable: false },
    );
  }
  return Math.round(ms);
}
