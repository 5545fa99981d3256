import { WaymarkError } from '../error/waymark-error.js';
import { nextWake } from '../runtime/core/sleeping.js';
import type { Snapshot } from '../runtime/core/snapshot.js';
import { iso } from './time.js';

/** A sleeping activation as the CLI shows it: which, of which node, and when it wakes. */
export interface SleepView {
  readonly activation: string;
  readonly node: string;
  readonly until: string;
  /** The resource whose rate limit deferred its attempt, if that is why it sleeps. */
  readonly rateLimited?: string;
}

/** The run's sleeps, soonest first. */
export function sleepViews(snapshot: Snapshot): SleepView[] {
  return snapshot.pending
    .flatMap((a) => (a.sleeping?.until === undefined ? [] : [{ a, until: a.sleeping.until }]))
    .sort((x, y) => x.until - y.until)
    .map(({ a, until }) => ({
      activation: a.id,
      node: a.node,
      until: iso(until),
      ...(a.sleeping?.rate !== undefined && { rateLimited: a.sleeping.rate }),
    }));
}

/**
 * Whether a waiting run waits only for time: it sleeps, and nobody has to answer or resume
 * anything (no person's wait, no breakpoint) for it to go on.
 */
export function onlySleeps(snapshot: Snapshot): boolean {
  return (
    snapshot.status === 'waiting' &&
    nextWake(snapshot) !== undefined &&
    !snapshot.pending.some((a) => a.waiting !== undefined || a.paused === true)
  );
}

/**
 * Refuses a resume that could do nothing but wait: the run sleeps, nothing else of it can move
 * (no person to answer, no breakpoint), and its first sleep is not due at `now`.
 * @throws WaymarkError `RUN_NOT_DUE`, saying when it is due.
 */
export function refuseBeforeDue(snapshot: Snapshot, now: number): void {
  if (!onlySleeps(snapshot)) return;
  const at = nextWake(snapshot)!;
  if (at <= now) return;
  const deadline = snapshot.limits.deadlineAt;
  if (deadline !== undefined && deadline <= now) return;
  throw new WaymarkError(
    'RUN_NOT_DUE',
    `run "${snapshot.runId}" sleeps until ${iso(at)} (${inWords(at - now)} from now): nothing to resume before then, and nothing was changed`,
    { retryable: false, details: { runId: snapshot.runId, dueAt: at } },
  );
}

/** `1d 2h`, `3h 5m`, `4m 10s`, `12s`: the two largest units of a length of time. */
function inWords(ms: number): string {
  const units: [string, number][] = [
    ['d', 86_400_000],
    ['h', 3_600_000],
    ['m', 60_000],
    ['s', 1_000],
  ];
  const parts: string[] = [];
  let left = ms;
  for (const [unit, size] of units) {
    const n = Math.floor(left / size);
    if (n > 0 || (unit === 's' && parts.length === 0)) parts.push(`${n}${unit}`);
    left -= n * size;
    if (parts.length === 2) break;
  }
  return parts.join(' ');
}
