import { useMemo, useRef, useState } from 'react';
import { duration } from './format.js';
import { type ActivationView, activationLabel, backoffOf, usageOf } from './run-model.js';

const rowHeight = 28;
const viewHeight = 336;
/** Rows drawn beyond the visible ones, so a fast scroll shows no blank rows. */
const overscan = 8;

/** The run's span of time, for placing each activation's bar. */
function spanOf(activations: readonly ActivationView[]): [number, number] {
  let start = Number.POSITIVE_INFINITY;
  let end = 0;
  for (const a of activations)
    for (const at of a.attempts) {
      if (at.startedAt === undefined) continue;
      start = Math.min(start, at.startedAt);
      end = Math.max(end, at.startedAt + (at.durationMs ?? 0));
    }
  return start === Number.POSITIVE_INFINITY ? [0, 1] : [start, Math.max(end, start + 1)];
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
  const [start, end] = useMemo(() => spanOf(activations), [activations, props.version]);
  const span = end - start;
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
          {a.attempts.map((at) =>
            at.startedAt === undefined ? null : (
              <span
                key={at.attempt}
                className={`bar ${at.status}`}
                title={`attempt ${at.attempt}: ${at.status}, ${duration(at.durationMs)}`}
                style={{
                  // The last bars of a run start at its end: kept in the track by their width.
                  left: `min(${(((at.startedAt - start) / span) * 100).toFixed(3)}%, 100% - 2px)`,
                  width: `max(2px, ${(((at.durationMs ?? 0) / span) * 100).toFixed(3)}%)`,
                }}
              />
            ),
          )}
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
        <span className="tbar">time: {duration(span)}</span>
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
