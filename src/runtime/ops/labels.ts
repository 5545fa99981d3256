import type { RunRecord } from '../../store/store.js';

/**
 * A stored run's labels as an object; empty when it has none. Labels are informational (the
 * CLI's graph file), so an unreadable value reads as none rather than failing whoever asks.
 *
 * @example
 * const { graphFile } = labelsOf(run); // run: a RunRecord from store.getRun(runId)
 */
export function labelsOf(run: Pick<RunRecord, 'labels'>): Readonly<Record<string, string>> {
  if (run.labels === null) return {};
  try {
    const labels: unknown = JSON.parse(run.labels);
    if (typeof labels !== 'object' || labels === null || Array.isArray(labels)) return {};
    return Object.fromEntries(
      Object.entries(labels).filter(
        (entry): entry is [string, string] => typeof entry[1] === 'string',
      ),
    );
  } catch {
    return {};
  }
}

/** The label naming a run's thread: the id of the thread's first run (see `continueThread`). */
export const threadLabel = 'thread';
/** The label naming the run a thread's run continues. */
export const previousLabel = 'previous';
