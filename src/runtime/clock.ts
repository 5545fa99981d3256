import { randomUUID } from 'node:crypto';

/**
 * Time as the runtime sees it. Tests pass a fake; this file is the only place in runtime/ that
 * reads the real clock or makes random ids, so everything else is deterministic given these.
 *
 * @example
 * await run(g, input, { clock: { now: () => 0, sleep: async () => {} } });
 */
export interface Clock {
  now(): number;
  /** Resolves after `ms`, or early (without rejecting) when `signal` aborts. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/** The real clock: wall time in milliseconds and timer-based sleep. */
export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: (ms, signal) =>
    new Promise((resolve) => {
      if (ms <= 0 || signal?.aborted) return resolve();
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      signal?.addEventListener('abort', done, { once: true });
    }),
};

/**
 * Milliseconds on a clock that only moves forward (not wall time): how a worker counts down the
 * leases it holds, which a jump of the wall clock must not stretch.
 */
export function monotonicMs(): number {
  return performance.now();
}

/** A fresh run id (a v4 UUID). */
export function newRunId(): string {
  return randomUUID();
}
