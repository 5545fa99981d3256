import { storeCorrupt } from '../../error/store-corrupt.js';
import { WaymarkError } from '../../error/waymark-error.js';
import type { CompiledGraph } from '../../graph/compiled.js';
import type { LoadedRun, RunRecord } from '../../store/store.js';
import { storeFormatVersion } from '../../store/store.js';
import type { Snapshot } from '../core/snapshot.js';
import { step } from '../core/step.js';
import { decodeEvent, decodeSnapshot } from './codec.js';

/**
 * A stored run's checkpoint as it stands now: its latest snapshot with the events after it
 * replayed through `step`. Refuses what it cannot replay faithfully instead of guessing.
 * @throws WaymarkError `STORE_VERSION_UNSUPPORTED`, `GRAPH_MISMATCH` (another graph, or a changed
 *   one under a run with events to replay), `STATE_VERSION_UNKNOWN`, `STORE_CORRUPT`.
 *
 * @example
 * const snapshot = currentSnapshot(graph, await store.loadRun(runId));
 */
export function currentSnapshot(graph: CompiledGraph, loaded: LoadedRun): Snapshot {
  const { run } = loaded;
  const runId = run.id;
  checkRecord(graph, run);
  let snapshot = decodeSnapshot(graph, loaded.snapshot.data, runId);
  checkStamp(graph, snapshot, runId, loaded.events.length > 0);
  let seq = loaded.snapshot.seq;
  for (const stored of loaded.events) {
    seq = nextSeq(runId, seq, stored.seq);
    snapshot = step(graph, snapshot, decodeEvent(stored.event, runId, stored.seq)).snapshot;
  }
  return snapshot;
}

/**
 * Refuses a run record this graph cannot read: written in a newer format, or of another graph.
 * @throws WaymarkError `STORE_VERSION_UNSUPPORTED`, `GRAPH_MISMATCH`.
 */
export function checkRecord(graph: CompiledGraph, run: RunRecord): void {
  const runId = run.id;
  if (run.format > storeFormatVersion) {
    throw new WaymarkError(
      'STORE_VERSION_UNSUPPORTED',
      `run "${runId}" was written in format ${run.format}, newer than this waymark reads (${storeFormatVersion})`,
      { retryable: false },
    );
  }
  if (run.graph !== graph.name) {
    throw refuse(
      'GRAPH_MISMATCH',
      `run "${runId}" belongs to graph "${run.graph}", not "${graph.name}"`,
    );
  }
}

/**
 * Refuses a checkpoint this graph cannot continue: a newer state version, or, when events follow
 * it (`replays`), one written under a changed graph.
 * @throws WaymarkError `STATE_VERSION_UNKNOWN`, `GRAPH_MISMATCH`.
 */
export function checkStamp(
  graph: CompiledGraph,
  snapshot: Snapshot,
  runId: string,
  replays: boolean,
): void {
  const stamp = snapshot.graph;
  if (stamp.stateVersion > graph.stateVersion) {
    throw refuse(
      'STATE_VERSION_UNKNOWN',
      `run "${runId}" holds state version ${stamp.stateVersion}, newer than this graph's ${graph.stateVersion}`,
    );
  }
  const changed = stamp.hash !== graph.hash || stamp.stateVersion !== graph.stateVersion;
  // Events after the snapshot are replayed through step(), which re-runs routers and reducers:
  // under a changed graph the replay could take another path, so it is refused, not guessed.
  if (changed && replays) {
    throw refuse(
      'GRAPH_MISMATCH',
      `run "${runId}" stopped mid-flight under graph ${stamp.hash.slice(0, 12)} (state v${stamp.stateVersion}); resume it with that graph, or rewind it`,
    );
  }
}

/**
 * The seq of the event after one at `seq`, which must be `stored`: a store that skips or repeats
 * an offset would otherwise replay a history that never happened.
 * @throws WaymarkError `STORE_CORRUPT`.
 */
export function nextSeq(runId: string, seq: number, stored: number): number {
  if (stored !== seq + 1)
    throw storeCorrupt(
      runId,
      stored <= seq
        ? `its event at seq ${stored} comes again after seq ${seq}`
        : `its events jump from seq ${seq} to seq ${stored}`,
      { table: 'events', after: seq, seq: stored },
    );
  return stored;
}

function refuse(code: 'GRAPH_MISMATCH' | 'STATE_VERSION_UNKNOWN', message: string) {
  return new WaymarkError(code, message, { retryable: false });
}
