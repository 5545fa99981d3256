import type { Clock } from '../../src/index.js';

/** A clock that never waits: time moves only when a sleep is asked for, and every sleep is logged. */
export function manualClock(start = 1_000): Clock & { readonly sleeps: number[] } {
  let now = start;
  const sleeps: number[] = [];
  return {
    sleeps,
    now: () => now,
    sleep: async (ms) => {
      sleeps.push(ms);
      now += ms;
    },
  };
}

/**
 * A clock whose time moves only when the test says: `advance(ms)` moves it and wakes, in order
 * of when they are due, every sleep that is due by then. Nothing waits on real time.
 */
export function fakeClock(start = 1_000): Clock & {
  advance(ms: number): Promise<void>;
  /** Sleeps not yet due. */
  readonly waiting: () => number;
} {
  let now = start;
  const sleepers: { at: number; wake: () => void }[] = [];
  const settle = () => new Promise<void>((resolve) => setImmediate(resolve));
  return {
    now: () => now,
    sleep: (ms, signal) =>
      new Promise<void>((resolve) => {
        if (ms <= 0 || signal?.aborted) return resolve();
        const sleeper = { at: now + ms, wake: resolve };
        sleepers.push(sleeper);
        signal?.addEventListener(
          'abort',
          () => {
            sleepers.splice(sleepers.indexOf(sleeper), 1);
            resolve();
          },
          { once: true },
        );
      }),
    waiting: () => sleepers.length,
    advance: async (ms) => {
      const until = now + ms;
      await settle();
      for (;;) {
        sleepers.sort((a, b) => a.at - b.at);
        const next = sleepers[0];
        if (next === undefined || next.at > until) break;
        sleepers.shift();
        now = next.at;
        next.wake();
        // Let what the wake-up started run (and maybe sleep again) before time moves on.
        await settle();
      }
      now = until;
      await settle();
    },
  };
}
