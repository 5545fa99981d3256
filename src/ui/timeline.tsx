import { useMemo, useRef, useState } from 'react';
import { duration } from './format.js';
import { type ActivationView, activationLabel, backoffOf, usageOf } from './run-model.js';
import { type TimeScale, timeScale } from './time-scale.js';

const rowHeight = 28;
const viewHeight = 336;
/** Rows drawn beyond the visible ones, so a fast scroll shows no blank rows. */
const overscan = 8;

/** The time axis of the run's attempts, with its long idle spans (waits) drawn short. */
function scaleOf(activations: readonly ActivationView[]): TimeScale {
  const intervals: [number, number][] = [];
  for (const a of activations)
    for (const at of a.attempts)
      if (at.startedAt !== undefined)
        intervals.push([at.startedAt, at.startedAt + (at.durationMs ?? 0)]);
  return timeScale(intervals);
}

/** The breaks of the axis, drawn across a row (or the header, with how long each was). */
function Breaks({ scale, labelled }: { scale: TimeScale; labelled?: boolean }) {
  return scale.breaks.map((b) => (
    <span
      key={b.left}
      className="tbreak"
      style={{ left: `${b.left.toFixed(3)}%`, width: `${b.width}%` }}
      title={`nothing ran for ${duration(b.ms)} (drawn short)`}
      data-ms={b.ms}
    >
      {labelled && <span className="tbreak-label">{duration(b.ms)}</span>}
    </span>
  ));
}

/**
 * The waterfall of activations, one row each in the order they were scheduled: a bar per attempt
 * placed on the run's time, the backoff between attempts, tokens and cost. Only the rows in view
 * are in the document (a windowed list), so a run of 10,000 steps scrolls as lightly as one of 10.
 */
export function Timeline(props: {
  activations: readonly ActivationView[];
  selected: string | undefined;
  onSelect: (activation: string) => void;
  version: number;
}) {
  const { activations, selected } = props;
  const [top, setTop] = useState(0);
  const box = useRef<HTMLDivElement>(null);
  // biome-ignore lint/correctness/useExhaustiveDependencies: the activations change in place; version says when
  const scale = useMemo(() => scaleOf(activations), [activations, props.version]);
  const first = Math.max(0, Math.floor(top / rowHeight) - overscan);
  const last = Math.min(activations.length, Math.ceil((top + viewHeight) / rowHeight) + overscan);
  const rows = [];
  for (let i = first; i < last; i++) {
    const a = activations[i]!;
    const { tokens, costUsd } = usageOf(a);
    const backoff = backoffOf(a);
    const total = a.attempts.reduce((sum, at) => sum + (at.durationMs ?? 0), 0);
    rows.push(
      <button
        type="button"
        key={a.id}
        className={`trow ${a.status} ${selected === a.id ? 'selected' : ''}`}
        style={{ top: i * rowHeight }}
        data-activation={a.id}
        onClick={() => props.onSelect(a.id)}
      >
        <span className="tname" title={a.id}>
          {activationLabel(a)}
        </span>
        <span className="tbar">
          <Breaks scale={scale} />
          {a.attempts.map((at) => {
            if (at.startedAt === undefined) return null;
            const left = scale.at(at.startedAt);
            const width = scale.at(at.startedAt + (at.durationMs ?? 0)) - left;
            return (
              <span
                key={at.attempt}
                className={`bar ${at.status}`}
                title={`attempt ${at.attempt}: ${at.status}, ${duration(at.durationMs)}`}
                style={{
                  // The last bars of a run start at its end: kept in the track by their width.
                  left: `min(${left.toFixed(3)}%, 100% - 2px)`,
                  width: `max(2px, ${width.toFixed(3)}%)`,
                }}
              />
            );
          })}
        </span>
        <span className="tnum">{duration(total)}</span>
        <span className="tnum">{a.attempts.length > 1 ? `${a.attempts.length} tries` : ''}</span>
        <span className="tnum">{backoff > 0 ? `+${duration(backoff)} wait` : ''}</span>
        <span className="tnum">{tokens > 0 ? `${tokens} tok` : ''}</span>
        <span className="tnum">{costUsd > 0 ? `$${costUsd.toFixed(4)}` : ''}</span>
      </button>,
    );
  }
  return (
    <div className="timeline">
      <div className="thead">
        <span className="tname">activation ({activations.length})</span>
        <span className="tbar" data-testid="time-axis">
          <Breaks scale={scale} labelled />
          <span className="tbar-title">
            time: {duration(scale.spanMs)}
            {scale.breaks.length > 0 &&
              ` · ${scale.breaks.length === 1 ? 'a wait' : `${scale.breaks.length} waits`} drawn short`}
          </span>
        </span>
        <span className="tnum">took</span>
        <span className="tnum">attempts</span>
        <span className="tnum">backoff</span>
        <span className="tnum">tokens</span>
        <span className="tnum">cost</span>
      </div>
      <div
        ref={box}
        className="tbody"
        style={{ height: Math.min(viewHeight, activations.length * rowHeight + 2) }}
        onScroll={(e) => setTop(e.currentTarget.scrollTop)}
        data-testid="timeline"
      >
        <div style={{ height: activations.length * rowHeight, position: 'relative' }}>{rows}</div>
      </div>
    </div>
  );
}
