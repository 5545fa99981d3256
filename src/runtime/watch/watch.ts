import { WaymarkError } from '../../error/waymark-error.js';
import type { CompiledGraph } from '../../graph/compiled.js';
import { type CommitFollower, followsCommits, type Store } from '../../store/store.js';
import { systemClock } from '../clock.js';
import { decodeEvent, decodeSnapshot } from '../codec/codec.js';
import { runOf } from '../codec/run-of.js';
import type { Snapshot } from '../core/snapshot.js';
import { step } from '../core/step.js';
import {
  compareOffsets,
  parseOffset,
  type StreamEvent,
  type StreamOptions,
  stepEvents,
} from './stream.js';

/** Options of {@link watch}. */
export interface WatchOptions extends StreamOptions {
  /** The offset of the last event already seen: the stream resumes right after it. */
  readonly after?: string;
  /** Stops the watch: the iteration ends (after the event in hand, if any). */
  readonly signal?: AbortSignal;
  /**
   * How often to look for new commits once caught up. Default 20 ms. A store that tells of
   * commits as they land (PostgreSQL, by LISTEN/NOTIFY) wakes the watch at once, and it looks
   * only every {@link backstopMs} in case a notification was lost.
   */
  readonly pollMs?: number;
  /**
   * `true` (the default): follow the run until it ends (succeeded, failed, cancelled, timed
   * out), across waits, resumes and workers. `false`: what is recorded now, then stop.
   */
  readonly follow?: boolean;
  /**
   * Where a followed stream ends. `'end'` (the default): when the run ends, following it across
   * its waits. `'stop'`: where the run stops, once every event recorded so far has been told and
   * it is not running: it waits (for a person, a timer, a breakpoint) or it has ended. A reader
   * that answers the wait and reads on after its last offset gets what followed.
   */
  readonly until?: 'end' | 'stop';
}

const finalStatuses = new Set(['succeeded', 'failed', 'cancelled', 'timed_out']);
const stoppedStatuses = new Set([...finalStatuses, 'waiting']);

/** How often a watch woken by notifications reads the store all the same. */
export const backstopMs = 1000;

/**
 * A run's event stream read from its store, from the start or after an offset: the events its
 * commits tell, in order, then (with `follow`) the ones of every commit still to come, whoever
 * makes it, until the run ends (or, with `until: 'stop'`, until it stops: waits or ends). The
 * events are derived from the history (nothing else is
 * stored for them), so a watcher that reconnects after the last offset it saw gets exactly what
 * came after: nothing lost, nothing twice.
 * @throws WaymarkError `RUN_NOT_FOUND`; `OPTIONS_INVALID` for an offset that is not `seq.i`;
 *   `GRAPH_MISMATCH` for a run of another graph; `STORE_*`.
 *
 * @example
 * for await (const event of watch(store, triage, runId, { after: lastSeen })) show(event);
 */
export async function* watch<S, I>(
  store: Store,
  graph: CompiledGraph<S, I>,
  runId: string,
  options: WatchOptions = {},
): AsyncGenerator<StreamEvent, void, undefined> {
  const g = graph as CompiledGraph;
  const { signal, follow = true, pollMs = 20, until = 'end' } = options;
  const stops = until === 'stop' ? stoppedStatuses : finalStatuses;
  const { after } = options;
  const afterSeq = after === undefined ? 0 : seqOfOffset(after);
  const record = await runOf(store, g, runId);
  // The events of commit `seq` come from the snapshot before it: start at the latest one kept.
  const from = Math.max(0, Math.min(afterSeq, record.seq) - 1);
  const kept = await store.snapshotAt(runId, from);
  if (kept === undefined) {
    throw new WaymarkError('RUN_NOT_FOUND', `there is no run "${runId}"`, { retryable: false });
  }
  let snapshot: Snapshot = decodeSnapshot(g, kept.data, runId);
  let seq = kept.seq;
  // Followed before the first read, so that no commit lands unseen between a read and a wait.
  const follower: CommitFollower | undefined =
    follow && followsCommits(store) ? await store.followCommits(runId) : undefined;
  try {
    yield* read();
  } finally {
    await follower?.close();
  }

  async function* read(): AsyncGenerator<StreamEvent, void, undefined> {
    for (;;) {
      // Stopped while it waited: the store may be closing, so it is not read again.
      if (signal?.aborted) return;
      const told = follower?.told ?? 0;
      const stored = await store.events(runId, seq);
      for (const e of stored) {
        const event = decodeEvent(e.event, runId, e.seq);
        const result = step(g, snapshot, event);
        for (const told of stepEvents(
          runId,
          e.seq,
          e.at,
          snapshot,
          event,
          result,
          options,
          g.untracked,
        )) {
          if (after === undefined || compareOffsets(told.offset, after) > 0) yield told;
          if (signal?.aborted) return;
        }
        snapshot = result.snapshot;
        seq = e.seq;
      }
      if (!follow || signal?.aborted) return;
      if (stored.length === 0) {
        // Caught up: the run has ended (or stopped) when its row says so and no commit is left
        // to read.
        const now = await store.getRun(runId);
        if (now === undefined || (stops.has(now.status) && now.seq <= seq)) return;
        if (follower?.live) await follower.next(told, Math.max(pollMs, backstopMs), signal);
        else await systemClock.sleep(pollMs, signal);
      }
    }
  }
}

/**
 * The commit an offset a watcher resumes after belongs to.
 * @throws WaymarkError `OPTIONS_INVALID` for what is not an offset (`seq.i`, or `seq`).
 *
 * @example
 * seqOfOffset('12.3'); // 12
 */
export function seqOfOffset(offset: string): number {
  const [seq] = parseOffset(offset);
  if (!Number.isFinite(seq)) {
    throw new WaymarkError(
      'OPTIONS_INVALID',
      `"${offset}" is not an offset of a run's stream: offsets are "seq.i", as each event's "offset" says`,
      { retryable: false, details: { after: offset } },
    );
  }
  return seq;
}
