import { WaymarkError } from '../../error/waymark-error.js';
import type { CompiledGraph } from '../../graph/compiled.js';
import type { LoadedRun } from '../../store/store.js';
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
  let snapshot = decodeSnapshot(graph, loaded.snapshot.data, runId);
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
  if (changed && loaded.events.length > 0) {
    throw refuse(
      'GRAPH_MISMATCH',
      `run "${runId}" stopped mid-flight under graph ${stamp.hash.slice(0, 12)} (state v${stamp.stateVersion}); resume it with that graph, or rewind it`,
    );
  }
  for (const stored of loaded.events)
    snapshot = step(graph, snapshot, decodeEvent(stored.event, runId, stored.seq)).snapshot;
  return snapshot;
}

function refuse(code: 'GRAPH_MISMATCH' | 'STATE_VERSION_UNKNOWN', message: string) {
  return new WaymarkError(code, message, { retryable: false });
}
