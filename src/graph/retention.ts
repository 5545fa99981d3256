import { WaymarkError } from '../error/waymark-error.js';
import { type Duration, parseDuration } from './duration.js';

/** The statuses a run ends with: what retention and `prune` delete. */
export const finishedStatuses = ['succeeded', 'failed', 'cancelled', 'timed_out'] as const;

/** A status a run ends with. */
export type FinishedStatus = (typeof finishedStatuses)[number];

/**
 * How long a finished run of a graph is kept, per final status, counted from when it finished
 * (Temporal: a namespace's retention period; LangGraph Platform: a thread's TTL). A status left
 * out is kept for good.
 *
 * @example
 * graph('blog', { state, retention: { succeeded: '30d', failed: '90d' } });
 */
export type RetentionOptions = Readonly<Partial<Record<FinishedStatus, Duration | string>>>;

/** {@link RetentionOptions} in ms, as a compiled graph carries it. */
export type RetentionPolicy = Readonly<Partial<Record<FinishedStatus, number>>>;

/**
 * The retention of a graph in ms per status, checked once at compile.
 * @throws WaymarkError `DECLARATION_INVALID` for a key that is not a finished status, or a
 *   value that is not a duration.
 *
 * @example
 * retentionPolicy('blog', { succeeded: '30d' }); // { succeeded: 2_592_000_000 }
 */
export function retentionPolicy(graph: string, options: RetentionOptions): RetentionPolicy {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw invalid(graph, `options.retention must be an object of durations by status`);
  }
  const policy: Partial<Record<FinishedStatus, number>> = {};
  for (const [status, duration] of Object.entries(options)) {
    if (!(finishedStatuses as readonly string[]).includes(status)) {
      throw invalid(
        graph,
        `options.retention has "${status}", which is not a status a run ends with (${finishedStatuses.join(', ')})`,
      );
    }
    if (duration === undefined) continue;
    policy[status as FinishedStatus] = parseDuration(
      duration as Duration,
      `graph "${graph}": options.retention.${status}`,
    );
  }
  return Object.freeze(policy);
}

function invalid(graph: string, message: string): WaymarkError {
  return new WaymarkError('DECLARATION_INVALID', `graph "${graph}": ${message}`, {
    retryable: false,
  });
}
