import { WaymarkError } from '../../error/waymark-error.js';
import type { CompiledGraph } from '../../graph/compiled.js';
import type { Store } from '../../store/store.js';
import { decodeEvent, decodeSnapshot } from '../codec/codec.js';
import { checkRecord, checkStamp, nextSeq } from '../codec/current.js';
import { missing } from '../codec/load-stored.js';
import { runOf } from '../codec/run-of.js';
import type { RunEvent, RunStatus } from '../core/snapshot.js';
import { step } from '../core/step.js';

/** The run as one step of its history left it. */
export interface HistoryStep<S = Record<string, unknown>> {
  /** The step's commit; 0 is the run as it was created, with its input. */
  readonly seq: number;
  /** When it was committed (ms since the epoch); the run's creation for seq 0. */
  readonly at: number;
  /** What the step applied: `created` for seq 0. */
  readonly event: RunEvent['type'] | 'created';
  /** The activation the event was about, if any. */
  readonly activation?: string;
  readonly status: RunStatus;
  /** The run's state after the step. */
  readonly state: S;
}

/** One page of a run's history, and where the next one starts (`after`), if there is one. */
export interface HistoryPage<S = Record<string, unknown>> {
  readonly steps: readonly HistoryStep<S>[];
  readonly next?: number;
}

/** Options of {@link history}. */
export interface HistoryOptions {
  /** Steps after this seq; default: from the run's creation (seq 0) on. */
  readonly after?: number;
  /** Most steps in the page. Default 100. */
  readonly limit?: number;
}

/**
 * The state of a run after each step of its history, a page at a time: computed from the
 * snapshot at or before the page and the events after it through `step`, so nothing per step is
 * stored, and each page costs at most one snapshot's worth of replay before it.
 * @throws WaymarkError `RUN_NOT_FOUND`, `OPTIONS_INVALID` (a bad `after` or `limit`),
 *   `GRAPH_MISMATCH` (a run of another graph), `STORE_*`.
 *
 * @example
 * const { steps, next } = await history(store, triage, runId, { limit: 20 });
 */
export async function history<S, I>(
  store: Store,
  graph: CompiledGraph<S, I>,
  runId: string,
  options: HistoryOptions = {},
): Promise<HistoryPage<S>> {
  const g = graph as CompiledGraph;
  const after = options.after ?? -1;
  const limit = options.limit ?? 100;
  if (!Number.isInteger(after) || after < -1)
    throw invalid(`after must be a seq (a whole number >= 0), not ${String(options.after)}`);
  if (!Number.isInteger(limit) || limit < 1)
    throw invalid(`limit must be a whole number >= 1, not ${String(options.limit)}`);
  const record = await runOf(store, g, runId);
  checkRecord(g, record);
  const kept = await store.snapshotAt(runId, Math.max(0, after));
  if (kept === undefined) throw await missing(store, runId);
  let snapshot = decodeSnapshot(g, kept.data, runId);
  const events = await store.events(runId, kept.seq);
  checkStamp(g, snapshot, runId, events.length > 0);
  const steps: HistoryStep<S>[] = [];
  if (kept.seq === 0 && after < 0) {
    steps.push({
      seq: 0,
      at: record.createdAt,
      event: 'created',
      status: 'running',
      state: snapshot.state as S,
    });
  }
  let seq = kept.seq;
  for (const stored of events) {
    if (steps.length >= limit) return { steps, next: steps.at(-1)!.seq };
    seq = nextSeq(runId, seq, stored.seq);
    const event = decodeEvent(stored.event, runId, stored.seq);
    snapshot = step(g, snapshot, event).snapshot;
    if (stored.seq <= after) continue;
    steps.push({
      seq: stored.seq,
      at: stored.at,
      event: event.type,
      ...('activation' in event && { activation: event.activation }),
      status: snapshot.status,
      state: snapshot.state as S,
    });
  }
  return { steps };
}

function invalid(message: string): WaymarkError {
  return new WaymarkError('OPTIONS_INVALID', message, { retryable: false });
}
