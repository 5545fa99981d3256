// The JSON line each scenario prints on stdout and bench/run.ts collects.

import type { Stat } from './measure.js';

/** One line of the final table. */
export interface Row {
  readonly measure: string;
  /** Unit of `waymark` and `peer` (e.g. "us/step", "ms"). */
  readonly unit: string;
  readonly waymark?: Stat;
  readonly peer?: Stat;
  /** peer / waymark: the median of the per-repetition ratios (see `pairedRatio`). */
  readonly ratio?: number;
  /** Free text for rows that are not a time, e.g. growth ratios or bytes. */
  readonly text?: string;
  /** The same for the peer's column. */
  readonly peerText?: string;
  readonly target?: string;
  /** Whether the target was met; printed, never asserted. */
  readonly met?: boolean;
}

export interface ScenarioReport {
  readonly scenario: string;
  readonly title: string;
  /** How waymark was loaded: its tsc build, or src/ through tsx. */
  readonly waymarkOrigin: string;
  /** The peer's display name, when the scenario compares against one. */
  readonly peerName?: string;
  readonly rows: readonly Row[];
  /** Lines printed under the table: settings each side used, what a row leaves out. */
  readonly notes?: readonly string[];
  /** Everything else worth keeping: calls per repetition, warm-up calls, sub-timings. */
  readonly details: Readonly<Record<string, unknown>>;
}

/** Marker that starts the result line, so stray output on stdout cannot be mistaken for it. */
export const resultPrefix = 'BENCH_RESULT ';

export function emit(report: ScenarioReport): void {
  process.stdout.write(`${resultPrefix}${JSON.stringify(report)}\n`);
}
