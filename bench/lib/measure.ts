// Shared timing harness for the scenarios. The method follows /work/shared/BENCHMARKS.md:
// warm up by time, then >= 7 timed repetitions, median reported, contenders alternating in the
// same process, no forced GC, every call checks its own result.

import { performance } from 'node:perf_hooks';

/** Sub-timings one call may report (milliseconds), e.g. declare vs compile. */
export type Parts = Readonly<Record<string, number>>;

/** One side of a comparison. */
export interface Contender {
  readonly name: string;
  /** Work units one call performs: node executions for a run, 1 for a build. */
  readonly units: number;
  /** Does the work once and throws when the result is wrong, so a broken run cannot look fast. */
  readonly call: () => Promise<Parts | undefined>;
  /**
   * Untimed work before every call, e.g. putting a stored run back as it was so each call resumes
   * the same run. With it, each call is timed on its own and the preparation is left out.
   */
  readonly prepare?: () => Promise<void>;
}

/** Summary of the per-repetition values. */
export interface Stat {
  readonly median: number;
  readonly min: number;
  readonly max: number;
  readonly reps: number;
}

export interface ContenderResult {
  readonly name: string;
  /** Per work unit, in the scenario's unit (us per step, ms per build). */
  readonly perUnit: Stat;
  /** The per-unit value of each repetition, in order, for ratios paired by repetition. */
  readonly values: readonly number[];
  readonly callsPerRep: number;
  readonly warmupCalls: number;
  /** The reported sub-timings, per call, in milliseconds. */
  readonly parts: Readonly<Record<string, Stat>>;
}

export interface Settings {
  /** Untimed warm-up, contenders alternating in slices of `repMs`. */
  readonly warmupMs: number;
  /** Timed repetitions per contender. */
  readonly reps: number;
  /** Aimed duration of one repetition of one contender; at least one call is made. */
  readonly repMs: number;
}

/** A number >= 0 from the environment variable `name`, or `fallback` when unset or not one. */
export function numberFromEnv(name: string, fallback: number): number {
  const raw = process.env[name];
  const value = raw === undefined ? Number.NaN : Number(raw);
  return Number.isFinite(value) && value >= 0 ? value : fallback;
}

/** Settings from the environment (set by bench/run.ts; `--quick` lowers them for smoke runs). */
export function settingsFromEnv(): Settings {
  return {
    warmupMs: numberFromEnv('BENCH_WARMUP_MS', 3000),
    reps: Math.max(1, Math.round(numberFromEnv('BENCH_REPS', 15))),
    repMs: numberFromEnv('BENCH_REP_MS', 250),
  };
}

export function stat(values: readonly number[]): Stat {
  if (values.length === 0) throw new Error('bench: no values to summarize');
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  const median = sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
  return { median, min: sorted[0]!, max: sorted[sorted.length - 1]!, reps: values.length };
}

/**
 * Warms every contender up (alternating time slices, until `warmupMs` has passed and each has
 * done at least `minWarmUnits` units), sizes a repetition from the last warm-up calls, then runs
 * `reps` timed repetitions, alternating and flipping the order each time (ABBA) so drift and
 * order effects fall on both sides alike. `scale` converts milliseconds per unit to the
 * reported unit (1000 for microseconds).
 */
export async function compare(
  contenders: readonly Contender[],
  options: { readonly settings: Settings; readonly minWarmUnits: number; readonly scale: number },
): Promise<ContenderResult[]> {
  const { settings, minWarmUnits, scale } = options;
  const warm = contenders.map(() => [] as number[]);
  const startedAt = performance.now();
  for (;;) {
    // Each contender gets a slice of about one repetition's time per round, so a fast one is
    // warmed by as much time as a slow one, not by as many calls.
    for (const [k, contender] of contenders.entries()) {
      const sliceStart = performance.now();
      do {
        await contender.prepare?.();
        const t = performance.now();
        await contender.call();
        warm[k]!.push(performance.now() - t);
      } while (performance.now() - sliceStart < settings.repMs);
    }
    const enoughTime = performance.now() - startedAt >= settings.warmupMs;
    const enoughWork = contenders.every(
      (c, k) => warm[k]!.length * c.units >= minWarmUnits && warm[k]!.length >= 2,
    );
    if (enoughTime && enoughWork) break;
  }
  const callsPerRep = warm.map((durations) => {
    const recent = stat(durations.slice(-5)).median;
    return Math.max(1, Math.round(settings.repMs / Math.max(recent, 1e-3)));
  });

  const perUnit = contenders.map(() => [] as number[]);
  const parts = contenders.map(() => new Map<string, number[]>());
  const forward = contenders.map((_, k) => k);
  const backward = [...forward].reverse();
  for (let rep = 0; rep < settings.reps; rep++) {
    for (const k of rep % 2 === 0 ? forward : backward) {
      const contender = contenders[k]!;
      const calls = callsPerRep[k]!;
      const sums = new Map<string, number>();
      const prepare = contender.prepare;
      let elapsed = 0;
      let t = performance.now();
      for (let c = 0; c < calls; c++) {
        if (prepare !== undefined) {
          await prepare();
          t = performance.now();
        }
        const reported = await contender.call();
        if (prepare !== undefined) elapsed += performance.now() - t;
        if (reported === undefined) continue;
        for (const [name, ms] of Object.entries(reported))
          sums.set(name, (sums.get(name) ?? 0) + ms);
      }
      if (prepare === undefined) elapsed = performance.now() - t;
      perUnit[k]!.push((elapsed / (calls * contender.units)) * scale);
      for (const [name, total] of sums) {
        const list = parts[k]!.get(name) ?? [];
        list.push(total / calls);
        parts[k]!.set(name, list);
      }
    }
  }

  return contenders.map((contender, k) => ({
    name: contender.name,
    perUnit: stat(perUnit[k]!),
    values: perUnit[k]!,
    callsPerRep: callsPerRep[k]!,
    warmupCalls: warm[k]!.length,
    parts: Object.fromEntries([...parts[k]!].map(([name, values]) => [name, stat(values)])),
  }));
}

/**
 * `top[i] / bottom[i]` per repetition, summarized. Repetition i of both sides ran back to back,
 * so a burst of load elsewhere on the machine hits both: on a shared 2-core machine the paired
 * ratio is steadier than the ratio of the two medians.
 */
export function pairedRatio(top: ContenderResult, bottom: ContenderResult): Stat {
  return stat(top.values.map((t, i) => t / bottom.values[i]!));
}

/** Throws with a message naming the scenario when a result is wrong. */
export function check(condition: boolean, message: string): asserts condition {
  if (!condition) throw new Error(`bench check failed: ${message}`);
}

export function progress(message: string): void {
  process.stderr.write(`  ${message}\n`);
}

/**
 * Whole numbers above 0 that the environment variable `name` lists (`4`, `1,4`), for a shorter
 * run of a part; `fallback` when it is unset.
 */
export function countsFromEnv(name: string, fallback: readonly number[]): readonly number[] {
  const raw = process.env[name];
  if (raw === undefined) return fallback;
  const counts = raw.split(',').map(Number);
  check(
    counts.every((n) => Number.isInteger(n) && n > 0),
    `${name}: ${raw}`,
  );
  return counts;
}
