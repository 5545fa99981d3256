import type { CompiledGraph } from '../../graph/compiled.js';
import { decodeEvent, decodeSnapshot } from '../../runtime/codec/codec.js';
import type { Snapshot } from '../../runtime/core/snapshot.js';
import { step } from '../../runtime/core/step.js';
import type { RecordedRun } from './recorded.js';
import type { Violation } from './violation.js';

// The replay rule: a run's kept snapshots are what folding its events through `step` gives,
// from the snapshot it was created with. A store keeps the first snapshot and the newest, so
// the newest is checked against a replay of every event before it, and the run's status
// against a replay of them all.

/** Why a run's replay was not checked, when it was not. */
export type ReplaySkip = 'no-graph' | 'graph-changed';

/** Checks one run's replay; returns why it could not, if it could not. */
export function checkReplay(
  recorded: RecordedRun,
  graph: CompiledGraph | undefined,
  out: Violation[],
): ReplaySkip | undefined {
  if (graph === undefined) return 'no-graph';
  const runId = recorded.run.id;
  const violation = (message: string) => {
    out.push({ rule: 'replay-differs', runId, message: `run "${runId}": ${message}` });
    return undefined;
  };
  if (recorded.first === undefined || recorded.first.seq !== 0)
    return violation('the store keeps no snapshot at seq 0 to replay from');
  let snapshot: Snapshot;
  try {
    snapshot = decodeSnapshot(graph, recorded.first.data, runId);
  } catch (error) {
    return violation(`its snapshot at seq 0 cannot be read (${String(error)})`);
  }
  // A replay under another graph could route elsewhere: that is `waymark replay`'s question.
  if (snapshot.graph.hash !== graph.hash) return 'graph-changed';
  const latest = recorded.latest ?? recorded.first;
  if (latest.seq > recorded.run.seq)
    return violation(
      `its newest snapshot is at seq ${latest.seq}, past its seq ${recorded.run.seq}`,
    );
  try {
    for (const stored of recorded.events) {
      if (stored.seq > latest.seq) break;
      snapshot = step(graph, snapshot, decodeEvent(stored.event, runId, stored.seq)).snapshot;
    }
    let kept: Snapshot;
    try {
      kept = decodeSnapshot(graph, latest.data, runId);
    } catch (error) {
      return violation(`its snapshot at seq ${latest.seq} cannot be read (${String(error)})`);
    }
    const want = canonical(snapshot);
    const got = canonical(kept);
    if (want !== got)
      violation(
        `its snapshot at seq ${latest.seq} differs from a replay of the events before it, from character ${firstDifference(want, got)}: ${excerpt(got, want)}`,
      );
    for (const stored of recorded.events) {
      if (stored.seq <= latest.seq) continue;
      snapshot = step(graph, snapshot, decodeEvent(stored.event, runId, stored.seq)).snapshot;
    }
  } catch (error) {
    return violation(`its events do not replay (${String(error)})`);
  }
  if (snapshot.status !== recorded.run.status)
    violation(
      `its events replay to status ${snapshot.status}, the store says ${recorded.run.status}`,
    );
  return undefined;
}

/** JSON with object keys sorted: two snapshots equal in value give the same text. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => {
    if (typeof v !== 'object' || v === null || Array.isArray(v)) return v;
    const sorted: Record<string, unknown> = {};
    for (const k of Object.keys(v).sort()) sorted[k] = (v as Record<string, unknown>)[k];
    return sorted;
  });
}

function firstDifference(a: string, b: string): number {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return i;
}

function excerpt(got: string, want: string): string {
  const at = firstDifference(got, want);
  return `stored …${got.slice(Math.max(0, at - 20), at + 40)}… replayed …${want.slice(Math.max(0, at - 20), at + 40)}…`;
}
