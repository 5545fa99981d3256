// The waterfall's time axis. A run that waited for a person (or for a timer) has spans of
// nothing: minutes or days between one step and the next. Drawn to wall time, those spans take
// the whole width and every step is a sliver. So a span where nothing ran that is long beside
// the rest of the run is drawn short, at a fixed width, as a visible break that says how long
// it was; the time around it keeps its proportions.

/** A span of time drawn short. */
export interface TimeBreak {
  /** Where the break is drawn: its left edge and width, in % of the track. */
  readonly left: number;
  readonly width: number;
  /** How long nothing ran there, in ms. */
  readonly ms: number;
}

/** The axis: where a point in time is drawn, and the breaks in it. */
export interface TimeScale {
  /** The run's span of time, in ms, breaks included (what the header says it took). */
  readonly spanMs: number;
  readonly breaks: readonly TimeBreak[];
  /** Where a point in time is drawn, in % of the track (0 to 100). */
  at(time: number): number;
}

/** A gap is drawn short once it is this long and this share of the run's span. */
const breakMinMs = 1000;
const breakShare = 0.1;
/** The width a break is drawn at, in % of the track. */
const breakWidth = 4;

/**
 * The time axis of these intervals (`[start, end]` in ms): linear, except for the gaps where
 * nothing ran that are at least a second and a tenth of the whole span, each drawn 4% wide.
 *
 * @example
 * timeScale([[0, 100], [600_000, 600_050]]).breaks; // one break of 599,900 ms
 */
export function timeScale(intervals: readonly (readonly [number, number])[]): TimeScale {
  const sorted = [...intervals].sort((a, b) => a[0] - b[0]);
  if (sorted.length === 0) return { spanMs: 1, breaks: [], at: () => 0 };
  // The spans where something ran (overlapping attempts merged), and the gaps between them.
  const busy: [number, number][] = [];
  for (const [start, end] of sorted) {
    const last = busy.at(-1);
    if (last !== undefined && start <= last[1]) last[1] = Math.max(last[1], end);
    else busy.push([start, Math.max(start, end)]);
  }
  const start = busy[0]![0];
  const end = Math.max(busy.at(-1)![1], start + 1);
  const spanMs = end - start;
  const gaps: [number, number][] = [];
  for (let i = 1; i < busy.length; i++) {
    const from = busy[i - 1]![1];
    const to = busy[i]![0];
    if (to - from >= breakMinMs && to - from >= breakShare * spanMs) gaps.push([from, to]);
  }
  const shortened = gaps.reduce((sum, [from, to]) => sum + (to - from), 0);
  // What is drawn to scale shares what the breaks leave of the track.
  const linearMs = Math.max(spanMs - shortened, 1);
  const perMs = (100 - breakWidth * gaps.length) / linearMs;
  const at = (time: number): number => {
    let position = 0;
    let cursor = start;
    for (const [from, to] of gaps) {
      if (time <= from) break;
      position += (from - cursor) * perMs;
      if (time < to) return position + ((time - from) / (to - from)) * breakWidth;
      position += breakWidth;
      cursor = to;
    }
    return Math.min(100, position + (Math.max(time, cursor) - cursor) * perMs);
  };
  return {
    spanMs,
    breaks: gaps.map(([from, to]) => ({ left: at(from), width: breakWidth, ms: to - from })),
    at,
  };
}
