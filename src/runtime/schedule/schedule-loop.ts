import type { Clock } from '../clock.js';
import { type TickHost, tickDue } from './tick.js';

/** How often a host looks at its schedules when none comes due sooner, by default. */
export const defaultSchedulePollMs = 1_000;

/** What a host's schedule loop needs: a {@link TickHost} and how long it may stay idle. */
export interface ScheduleLoopOptions extends Omit<TickHost, 'now'> {
  readonly clock: Clock;
  /** The longest wait between looks: a schedule put by another process is found by then. */
  readonly pollMs?: number;
  readonly onError?: (error: unknown) => void;
}

/**
 * A host's schedules, ticked until `signal` aborts: each look takes the due ticks
 * ({@link tickDue}), then sleeps on the host's clock until the soonest next tick (one indexed
 * read, as the worker's wait for its soonest timer), or `pollMs` if that is sooner. A store
 * that cannot be reached for a moment is tried again at the next look.
 *
 * @example
 * await scheduleLoop({ store, graphs, clock, start }, stop.signal);
 */
export async function scheduleLoop(
  options: ScheduleLoopOptions,
  signal: AbortSignal,
): Promise<void> {
  const { store, graphs, clock } = options;
  const pollMs = options.pollMs ?? defaultSchedulePollMs;
  const onError = options.onError ?? (() => {});
  const names = [...graphs.keys()];
  const host: TickHost = { ...options, now: () => clock.now() };
  while (!signal.aborted) {
    await tickDue(host, 100, onError).catch(onError);
    if (signal.aborted) return;
    const now = clock.now();
    const next = await store.nextScheduleAt(names, now).catch((error: unknown) => {
      onError(error);
      return undefined;
    });
    await clock.sleep(
      next === undefined ? pollMs : Math.min(pollMs, Math.max(1, next - now)),
      signal,
    );
  }
}
