// Alternating contenders that are sets of worker processes: only the one being timed runs, the
// others are paused (SIGSTOP), warm but polling nobody's server; warm-up by time, then the
// repetitions in ABBA order so drift falls on every side alike (BENCHMARKS.md).

import { sleep } from '../pg.js';
import { type Child, pause } from './children.js';

/** One contender: its worker processes and one repetition of its measurement. */
export interface Alternating<T> {
  readonly children: readonly Child[];
  rep(label: string): Promise<T>;
}

/**
 * Untimed rounds of every side until each has had about `warmupMs` (at least one round), then
 * `reps` timed repetitions of each, alternating; returns each side's repetitions in order.
 * Per side, because a worker process warms only while it works: with three sides sharing one
 * warm-up, a waymark worker still spent a fifth of the machine in V8's optimizing compiler
 * during the timed repetitions (perf, 4 workers), which a long-lived worker pays once.
 * With `aloneMs`, each side first works alone for that long, back to back, the others paused:
 * for sides whose processes each see a small share of rare work (a 4-worker fan-out, where each
 * process runs a quarter of the branches and folds a quarter of the runs).
 */
export async function alternate<T>(
  sides: readonly Alternating<T>[],
  warmupMs: number,
  reps: number,
  aloneMs = 0,
): Promise<T[][]> {
  const run = async (side: Alternating<T>, label: string) => {
    for (const other of sides) if (other !== side) pause(other.children, true);
    pause(side.children, false);
    await sleep(100); // a continued worker's overdue timers fire before the clock starts
    return side.rep(label);
  };
  for (const side of aloneMs > 0 ? sides : []) {
    const until = Date.now() + aloneMs;
    let round = 0;
    await run(side, `alone${round++}`);
    while (Date.now() < until) await side.rep(`alone${round++}`);
  }
  const started = Date.now();
  let round = 0;
  do {
    for (const side of sides) await run(side, `warm${round}`);
    round++;
  } while (Date.now() - started < warmupMs * sides.length);
  const results = sides.map(() => [] as T[]);
  const order = sides.map((_, k) => k);
  for (let rep = 0; rep < reps; rep++) {
    for (const k of rep % 2 === 0 ? order : [...order].reverse())
      results[k]!.push(await run(sides[k]!, `rep${rep}`));
  }
  for (const side of sides) pause(side.children, false);
  return results;
}
