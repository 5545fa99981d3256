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
