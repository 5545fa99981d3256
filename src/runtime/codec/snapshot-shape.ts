import { isRecord, storeCorrupt } from '../../error/store-corrupt.js';
import { storedStatuses } from '../../store/store.js';
import type { Snapshot } from '../core/snapshot.js';

// What makes a stored text a waymark checkpoint, for both of its readers: the codec, which
// rebuilds it with the graph, and the command, which shows a stopped run without loading the
// graph file (and so without the runtime: this module imports nothing heavier than the error).

const statuses: ReadonlySet<string> = new Set(storedStatuses);

/**
 * The parsed snapshot of run `runId` when it has a checkpoint's shape, its spend and quarantine
 * filled in for checkpoints written before either was recorded (none yet).
 * @throws WaymarkError `STORE_CORRUPT` naming the run when it does not.
 */
export function checkpointShape(value: unknown, runId: string): Record<string, unknown> {
  const ok =
    isRecord(value) &&
    statuses.has(value.status as string) &&
    value.runId === runId &&
    isRecord(value.graph) &&
    isRecord(value.state) &&
    Array.isArray(value.pending) &&
    isRecord(value.visits) &&
    typeof value.steps === 'number' &&
    Array.isArray(value.errors) &&
    isRecord(value.fanOuts) &&
    isRecord(value.limits);
  if (!ok)
    throw storeCorrupt(runId, 'its snapshot does not have the shape of a waymark checkpoint');
  const spent: Snapshot['spent'] = isRecord(value.spent)
    ? (value.spent as unknown as Snapshot['spent'])
    : { inputTokens: 0, outputTokens: 0, costUsd: 0 };
  return { ...value, spent, quarantine: Array.isArray(value.quarantine) ? value.quarantine : [] };
}
