import { isWaymarkError } from '../../error/waymark-error.js';
import { monotonicMs, systemClock } from '../clock.js';

/** A store error that passes: a connection lost, a server restarting, a lock not free. */
export function isPassing(error: unknown): boolean {
  return isWaymarkError(error) && error.code.startsWith('STORE_') && error.retryable;
}

// 50, 100, 200 ... ms between tries, up to 2 s.
const backoffMs = 50;
const backoffCapMs = 2_000;

/**
 * Calls `call` until it succeeds, taking it again after a pause when it fails for a store that
 * cannot be reached for a moment (a retryable `STORE_*` error), for at most `forMs` in all; any
 * other error, or the last one after `forMs`, is thrown. For the calls a driver makes before it
 * holds a lease (creating a run, taking its lease, loading it), whose failure would otherwise
 * end a run's start on a blip of the network. `retried` says whether the call failed before:
 * a write whose reply was lost may have landed.
 *
 * @example
 * const lease = await patiently((retried) => store.acquire(runId, claim));
 */
export async function patiently<T>(
  call: (retried: boolean) => Promise<T>,
  forMs = 30_000,
): Promise<T> {
  const until = monotonicMs() + forMs;
  for (let failures = 0; ; failures++) {
    try {
      return await call(failures > 0);
    } catch (error) {
      const wait = Math.min(backoffCapMs, backoffMs * 2 ** failures);
      if (!isPassing(error) || monotonicMs() + wait > until) throw error;
      await systemClock.sleep(wait);
    }
  }
}
