import type { ErrorClass, ErrorCode } from '../../error/codes.js';
import type { ErrorCause } from '../../error/error-value.js';
import type { TurnRecord, Usage } from '../../graph/types.js';

/** One attempt of one activation, as it happened. */
export interface TraceEntry {
  readonly node: string;
  readonly activation: string;
  readonly parent: string | null;
  readonly attempt: number;
  /** Milliseconds since the epoch, from the run's clock. */
  readonly startedAt: number;
  readonly durationMs: number;
  /** `cancelled`: the run stopped while the attempt was in flight and its result was discarded. */
  readonly status: 'succeeded' | 'failed' | 'cancelled';
  /** True when a failed attempt was followed by another attempt. */
  readonly retried: boolean;
  /**
   * Set inside a subgraph: the ids of the steps that entered the subgraphs it runs in, outermost
   * first (`['review:1']`); {@link nestTrace} nests the entry under them.
   */
  readonly within?: readonly string[];
  /** Set when the node did not run: its output was reused from an earlier run with the same inputs. */
  readonly reused?: true;
  /** Model tokens (and model, cost) the attempt reported through `ctx.usage`. */
  readonly usage?: Usage;
  /** The turns of a loop inside the attempt (an agent), as reported through `ctx.turn`. */
  readonly turns?: readonly TurnRecord[];
  /** The attempt's last `ctx.heartbeat()`: when it was sent, and its details if it had any. */
  readonly heartbeat?: { readonly at: number; readonly details?: unknown };
  readonly error?: {
    readonly code: ErrorCode;
    readonly class: ErrorClass;
    readonly message: string;
    /** What the node threw, where it threw it: set by {@link loadTrace}, from the run's history. */
    readonly stack?: string;
    /** The thrown error's `cause` chain, outermost first: set by {@link loadTrace}. */
    readonly cause?: ErrorCause;
  };
}

/**
 * What a run did, attempt by attempt. `path` is the visited nodes in order, one per activation
 * (retries of an activation, before or after a resume, appear once): the path through the graph.
 *
 * @example
 * expect(result.trace.path).toEqual(['plan', 'search', 'verify', 'publish']);
 */
export interface Trace {
  readonly entries: readonly TraceEntry[];
  readonly path: readonly string[];
}

/** Builds a {@link Trace} from entries in the order they were recorded. */
export function traceOf(entries: readonly TraceEntry[]): Trace {
  const path: string[] = [];
  const seen = new Set<string>();
  // One per activation, not per attempt: a retry, or a resume trying a failed activation again,
  // is the same step of the path.
  for (const entry of entries) {
    if (seen.has(entry.activation)) continue;
    seen.add(entry.activation);
    path.push(entry.node);
  }
  return { entries, path };
}
