import type { ErrorValue } from '../../error/error-value.js';
import type { CompiledGraph, RuntimeNode } from '../../graph/compiled.js';
import type { JoinSummary } from '../../graph/types.js';
import type { Activation, BranchRef, FanOut, RunEvent, Snapshot } from './snapshot.js';

/** How a new activation came to be scheduled, besides its parent. */
export interface Scheduling {
  /** The error of an `onError` route. */
  readonly cause?: ErrorValue;
  /** The branch the activation runs in. */
  readonly branch?: BranchRef;
  /** What a join activation learns about its branches. */
  readonly join?: JoinSummary;
  /** The subgraph scope the activation runs in (see `Activation.scope`). */
  readonly scope?: readonly string[] | undefined;
}

/**
 * The working copy one transition mutates before it is frozen into the next snapshot. The
 * transition (step.ts) owns it; the fan-out rules (fan-out.ts) work on it through this type,
 * which keeps the two files apart without an import cycle.
 */
export interface Draft {
  readonly graph: CompiledGraph;
  state: Snapshot['state'];
  fanOuts: Record<string, FanOut>;
  /** Fan-outs already copied in this transition: edited in place from then on (copy on write). */
  readonly editing: Set<string>;
  /** Branches and branch visit tables this transition made: changed in place from then on. */
  readonly made: Set<object>;
  pending: Activation[];
  readonly running: boolean;
  /** While set, what is admitted waits for a resume (a breakpoint after a node, a patch as one). */
  pausing: boolean;
  enqueue(node: string, parent: string | null, how?: Scheduling): void;
  /** Records a final failure and follows the node's onError route, fails its branch, or fails the run. */
  failFinally(
    node: RuntimeNode,
    error: ErrorValue,
    branch: BranchRef | undefined,
    scope?: readonly string[],
  ): void;
  recordError(error: ErrorValue): void;
  /**
   * Drops pending activations, closes their waits, and tells the shell to stop the ones in
   * flight (`stop`; false when nothing of the run is in flight: an operator moving it).
   */
  abort(ids: readonly string[], stop?: boolean): void;
  /** Stops the run with a fan-out's join undecided (its score threw): a resume settles it again. */
  blockJoin(fanOut: FanOut, join: RuntimeNode, error: ErrorValue): void;
}

/** What a resume (resume-draft.ts) needs of the transition besides the fan-out rules. */
export interface ResumeDraft extends Draft {
  /** Restamps the checkpoint, takes the event's deadline and step limit; true for a failed run. */
  resumeUnder(event: Extract<RunEvent, { type: 'resumed' }>): boolean;
  /** Lets a blocked activation in again through its cap and the step limit. */
  admit(activation: Activation): void;
  /** Routes a completed activation again (its router failed before). */
  moveOn(activation: Activation): void;
  /** Puts an activation back to run (or to wait, if it is a person's). */
  schedule(activation: Activation): void;
  /**
   * Counts the visits of nodes that ran before a move (`ran`: the highest activation number of
   * each), so a node run again gets a new activation id, never one already completed.
   */
  ranBefore(ran: Readonly<Record<string, number>>): void;
}
