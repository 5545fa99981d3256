import { WaymarkError } from '../error/waymark-error.js';
import type { Snapshot } from '../runtime/core/snapshot.js';
import type { LoadedRun, Store } from '../store/store.js';

/** A stored run as the command reads it without its graph file. */
export interface StoredRun {
  readonly loaded: LoadedRun;
  /**
   * The run's checkpoint when its latest snapshot is current: a run that stopped (waiting,
   * failed, succeeded, cancelled) wrote a full snapshot as its last commit. Undefined when events
   * after the snapshot must be replayed through the graph's routers and reducers (a run whose
   * process died mid-flight): then only `inspect()` with the graph can say.
   */
  readonly snapshot: Snapshot | undefined;
  /** The run's latest checkpoint, current or not: what a reader without the graph can show. */
  readonly checkpoint: Snapshot;
}

/**
 * Reads a run without loading its graph file (and so without tsx, zod or the runtime): what
 * `show` and the next-command hints need for a run that stopped.
 * @throws WaymarkError `RUN_NOT_FOUND`, `STORE_CORRUPT`, `STORE_VERSION_UNSUPPORTED`.
 *
 * @example
 * const { snapshot } = await readStoredRun(store, runId);
 */
export async function readStoredRun(store: Store, runId: string): Promise<StoredRun> {
  const loaded = await store.loadRun(runId);
  if (loaded === undefined) {
    throw new WaymarkError('RUN_NOT_FOUND', `there is no run "${runId}"`, { retryable: false });
  }
  const checkpoint = parseSnapshot(loaded.snapshot.data, runId);
  return { loaded, snapshot: loaded.events.length > 0 ? undefined : checkpoint, checkpoint };
}

// The checks of runtime/codec/codec.ts's decodeSnapshot, without the graph it needs only to rebuild
// the state of open fan-out branches, which nothing here prints.
function parseSnapshot(text: string, runId: string): Snapshot {
  let value: Record<string, unknown>;
  try {
    value = JSON.parse(text) as Record<string, unknown>;
  } catch (cause) {
    throw corrupt(runId, 'its snapshot is not valid JSON', cause);
  }
  const ok =
    typeof value === 'object' &&
    value !== null &&
    typeof value.status === 'string' &&
    value.runId === runId &&
    isObject(value.graph) &&
    isObject(value.state) &&
    Array.isArray(value.pending) &&
    typeof value.steps === 'number' &&
    Array.isArray(value.errors) &&
    isObject(value.limits);
  if (!ok) throw corrupt(runId, 'its snapshot does not have the shape of a waymark checkpoint');
  // Checkpoints written before spend and quarantine were recorded have neither: none yet.
  return {
    ...(value as unknown as Snapshot),
    spent: isObject(value.spent)
      ? (value.spent as Snapshot['spent'])
      : { inputTokens: 0, outputTokens: 0, costUsd: 0 },
    quarantine: Array.isArray(value.quarantine) ? (value.quarantine as Snapshot['quarantine']) : [],
  };
}

/**
 * A JSON value the store holds for a run (an answer, a wait's request), or STORE_CORRUPT
 * naming the run: a damaged row is never an uncoded error.
 *
 * @example
 * const answer = storedJson(wait.answer, runId, `the answer to wait "${wait.requestId}"`);
 */
export function storedJson(text: string, runId: string, what: string): unknown {
  try {
    return JSON.parse(text);
  } catch (cause) {
    throw corrupt(runId, `${what} is not valid JSON`, cause);
  }
}

function corrupt(runId: string, why: string, cause?: unknown): WaymarkError {
  return new WaymarkError('STORE_CORRUPT', `run "${runId}" cannot be loaded: ${why}`, {
    retryable: false,
    details: { runId },
    ...(cause !== undefined && { cause }),
  });
}

function isObject(value: unknown): boolean {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
