import type { ErrorValue } from '../../error/error-value.js';
import type { JoinSummary, Spend, Usage } from '../../graph/types.js';

type State = Readonly<Record<string, unknown>>;

/** Where a run is. `running` and `waiting` can continue; the other four are final. */
export type RunStatus = 'running' | 'waiting' | 'succeeded' | 'failed' | 'cancelled' | 'timed_out';

/** Which branch of which fan-out an activation belongs to. */
export interface BranchRef {
  /** The fan-out's id: the id of the activation that started it (`triage:1`). */
  readonly fanOut: string;
  /** Branch declaration order for a fixed fan-out, item index for a map. */
  readonly index: number;
}

/** One execution of one node; `id` is stable across attempts and resumes. */
export interface Activation {
  /**
   * `node:visit`, e.g. `plan:2` for the second time `plan` runs in this run. Inside a branch the
   * id is qualified by the branch and counts visits per branch: `triage:1[0]/fix:1`, so it does
   * not depend on which sibling finished first.
   */
  readonly id: string;
  readonly node: string;
  /** 1 for the first attempt. */
  readonly attempt: number;
  /** The activation whose completion scheduled this one; null for the entry. */
  readonly parent: string | null;
  /** Set when the activation was reached through an `onError` route. */
  readonly error?: ErrorValue;
  /** Set inside a branch of a fan-out. */
  readonly branch?: BranchRef;
  /**
   * Set inside a subgraph: the ids of the entries of the subgraphs it runs in, outermost first
   * (`['review:1']`), so its trace entry nests under the step that entered the child.
   */
  readonly scope?: readonly string[];
  /** Set on a join node's activation: what became of each branch. */
  readonly join?: JoinSummary;
  /** Set on a person node's activation: the open wait it stands for, until it is answered. */
  readonly waiting?: OpenWait;
  /** Set on a sleep node's activation: it sleeps, and completes when its time comes. */
  readonly sleeping?: Sleeping;
  /**
   * Not before this time (ms since the epoch): a retry waiting out its backoff. Data, not a
   * sleep, so whoever drives the run next (a resume, a worker) knows when it is due.
   */
  readonly notBefore?: number;
  /**
   * Set on an activation kept so that a resume can pick up a decision that stopped the run,
   * instead of on work to execute: `enqueue` (it was not scheduled: a visit cap), `route` (it
   * completed, its router failed), `settle` (its fan-out's join could not decide), `branch` (it
   * failed its branch: dropped when the fan-out closes, tried again if its join failed the run).
   * A resume takes the decision again under the graph it resumes with; nothing runs twice.
   */
  readonly blocked?: Blocked;
  /**
   * Set on an activation stopped at a breakpoint (`pauseBefore` its node, or `pauseAfter` the
   * node whose completion admitted it): the run waits, and a resume runs it.
   */
  readonly paused?: true;
}

/**
 * What a blocked activation waits to have decided again; see {@link Activation.blocked}.
 * `branch`: a failed branch's activation, kept while its fan-out is open.
 */
export type Blocked = 'enqueue' | 'route' | 'settle' | 'branch';

/** A wait a person node opened: what was asked, under a stable request id. */
export interface OpenWait {
  /** `runId/activationId`: stable, and the id an answer names. */
  readonly requestId: string;
  readonly prompt: string;
  /** When it closes unanswered, from the node's `deadline` (ms since the epoch), if it has one. */
  readonly deadlineAt?: number;
  /** An event node's key (its `key` of the state), which a `{ graph, key }` signal names. */
  readonly key?: string;
}

/**
 * A sleep node's sleep: `until` (ms since the epoch) once it is known. A `for` sleep knows only
 * its length when the transition reaches it (the core reads no clock): its driver records the
 * time at once, as a `slept` event committed with the step that reached it.
 */
export interface Sleeping {
  readonly until?: number;
  readonly forMs?: number;
  /**
   * The shared resource whose rate limit had no room for the attempt (its node's `rateLimit`):
   * it sleeps until the window has room, then runs the same attempt, which it never started.
   */
  readonly rate?: string;
}

/** Where a branch is; `succeeded`, `failed` and `cancelled` are final. */
export type BranchStatus = 'queued' | 'running' | 'succeeded' | 'failed' | 'cancelled';

/** One branch of an open fan-out. */
export interface Branch {
  readonly status: BranchStatus;
  /** What the branch sees: the state at the fan-out plus its own updates, never a sibling's. */
  readonly state: State;
  /** Its updates as applied (parsed), in order: what the join merges through the reducers. */
  readonly updates: readonly State[];
  /** Visits per node within this branch, for activation ids. */
  readonly visits: Readonly<Record<string, number>>;
  readonly error?: ErrorValue;
}

/** A fan-out whose join has not resolved yet: its barrier counts exactly these branches. */
export interface FanOut {
  readonly id: string;
  readonly from: string;
  readonly join: string;
  /** Set on a fan-out opened inside a branch of another: that branch, which its join returns to. */
  readonly parent?: BranchRef;
  /** Set on a fan-out opened inside a subgraph: the scope its branches and its join run in. */
  readonly scope?: readonly string[];
  /** Entry node of each branch. */
  readonly entries: readonly string[];
  /** The items of a map fan-out, by branch index. */
  readonly items?: readonly unknown[];
  readonly concurrency: number;
  readonly branches: readonly Branch[];
  /** Branches started so far; queued branches start in index order, so the next is this index. */
  readonly started: number;
  /** Branches running now. */
  readonly running: number;
  readonly failed: number;
  /** Indexes of succeeded branches in the order they succeeded (what `any` and `quorum` count). */
  readonly successes: readonly number[];
}

/** Run-level caps, fixed at start and kept in the snapshot so a resume enforces the same ones. */
export interface RunLimits {
  /** Most completed activations in the run. */
  readonly maxSteps: number;
  /** Most model tokens (input + output) the run may spend. */
  readonly maxTokens?: number;
  /** Most model cost, in US dollars, the run may spend. */
  readonly maxCostUsd?: number;
  /** The model every model node uses (`provider:model-id`), fixed for the run's whole life. */
  readonly model?: string;
  /**
   * When the run times out (ms since the epoch): set from `timeoutMs` when the run starts, and
   * kept across resumes, so a resume does not restart the run's time limit.
   */
  readonly deadlineAt?: number;
  /** The time limit `deadlineAt` was set from, for the message of the timeout. */
  readonly timeoutMs?: number;
  /** Breakpoints: the run waits before an activation of these nodes starts. */
  readonly pauseBefore?: readonly string[];
  /** Breakpoints: the run waits after an activation of these nodes completes, before what follows. */
  readonly pauseAfter?: readonly string[];
  /**
   * The run's context (`ctx.context`), as the graph's context schema parsed it: fixed for the
   * run's whole life, like `model`, and kept here so that a resume or a worker reads the same.
   */
  readonly context?: unknown;
}

/** An output a node set aside instead of letting it into state, and why. */
export interface QuarantineEntry {
  readonly node: string;
  readonly activation: string;
  readonly output: unknown;
  /** Machine-readable reasons, e.g. `line-out-of-range`. */
  readonly reasons: readonly string[];
}

/** What an attempt reported besides its update: carried by its completion or failure event. */
export interface AttemptReport {
  readonly usage?: Usage;
  readonly quarantine?: readonly {
    readonly output: unknown;
    readonly reasons: readonly string[];
  }[];
  /** What the node told its watchers with `ctx.emit`, in order, with when (ms since the epoch). */
  readonly emitted?: readonly {
    readonly name: string;
    readonly data: unknown;
    readonly at: number;
  }[];
}

/** Which graph and state schema a checkpoint was written under. */
export interface GraphStamp {
  readonly name: string;
  /** Structural hash of the graph. */
  readonly hash: string;
  readonly version: number;
  readonly stateVersion: number;
}

interface SnapshotBase {
  readonly runId: string;
  readonly graph: GraphStamp;
  /** The business state, deeply frozen. */
  readonly state: Readonly<Record<string, unknown>>;
  /** Activations scheduled and not yet completed, in scheduling order. */
  readonly pending: readonly Activation[];
  /** Activations so far of each node that can run more than once (caps count these). */
  readonly visits: Readonly<Record<string, number>>;
  /** Completed activations so far. */
  readonly steps: number;
  /** Every error value recorded, oldest first. */
  readonly errors: readonly ErrorValue[];
  /** Fan-outs whose join has not resolved, by id. */
  readonly fanOuts: Readonly<Record<string, FanOut>>;
  readonly limits: RunLimits;
  /** Model tokens and cost spent so far. */
  readonly spent: Spend;
  /** Outputs set aside by checks, oldest first: never part of state. */
  readonly quarantine: readonly QuarantineEntry[];
}

/**
 * Everything needed to continue a run: business state and execution state. Each status
 * carries exactly the fields it has; the stopped ones carry the error that stopped them.
 */
export type Snapshot =
  | (SnapshotBase & { readonly status: 'running' })
  | (SnapshotBase & { readonly status: 'waiting' })
  | (SnapshotBase & { readonly status: 'succeeded' })
  | (SnapshotBase & {
      readonly status: 'failed' | 'cancelled' | 'timed_out';
      readonly error: ErrorValue;
    });

/** Inputs of the transition function: what happened since the last snapshot. */
export type RunEvent =
  | { readonly type: 'started' }
  | ({
      readonly type: 'completed';
      readonly activation: string;
      /** The attempt that completed; an event of another attempt is stale and changes nothing. */
      readonly attempt?: number;
      /**
       * The fields the node set, as parsed by their schemas where the node ran (or undefined for
       * none): exactly what was applied, so a replay parses nothing again.
       */
      readonly update: unknown;
      /** Hash of the activation's inputs (with a store): what a later run may reuse it by. */
      readonly inputHash?: string;
      /** The update was read back from an earlier run with the same inputs, not computed. */
      readonly reused?: true;
      /**
       * The update is a node's raw return, not yet parsed: events stored before store format 3
       * are read back with this mark, and the transition parses them as it did then.
       */
      readonly unparsed?: true;
    } & AttemptReport)
  | ({
      readonly type: 'failed';
      readonly activation: string;
      /** The attempt that failed; an event of another attempt is stale and changes nothing. */
      readonly attempt?: number;
      readonly error: ErrorValue;
      /** When it failed (ms since the epoch): a retry's backoff counts from here. */
      readonly at?: number;
    } & AttemptReport)
  | { readonly type: 'cancelled'; readonly reason: string }
  /** The run passed its deadline (`timeoutMs` is set on events stored before deadlines were data). */
  | { readonly type: 'deadline'; readonly timeoutMs?: number }
  /**
   * A stopped or interrupted run continues: its pending activations run again, and its blocked
   * decisions are taken again. `deadlineAt` replaces the run's deadline (null: none), with the
   * `timeoutMs` it was set from.
   */
  | {
      readonly type: 'resumed';
      readonly deadlineAt?: number | null;
      readonly timeoutMs?: number;
      /** A raised step limit, for a run that stopped at its old one. */
      readonly maxSteps?: number;
    }
  /**
   * A person answered a wait: the answer becomes the node's update. `update` is that update as
   * parsed where the answer was applied; events stored before store format 3 have none, and the
   * transition computes it from `answer` as it did then.
   */
  | {
      readonly type: 'answered';
      readonly activation: string;
      readonly answer: unknown;
      readonly update?: unknown;
    }
  /**
   * An operator changed the state of a run that waits or stopped, before it continues: the
   * fields as parsed where the patch was made, merged through the reducers, with who and why.
   */
  | {
      readonly type: 'patched';
      readonly update: Readonly<Record<string, unknown>>;
      readonly by: string;
      readonly reason: string;
      /**
       * The patch stands in for this node's completion (LangGraph's `updateState(values,
       * asNode)`): the run's pending activations (`dropped`) go, and what follows the node is
       * scheduled on the new state, paused until a resume runs it.
       */
      readonly asNode?: string;
      readonly dropped?: readonly string[];
      /** As a node: the nodes that ran before, by their highest activation number (see `moved`). */
      readonly ran?: Readonly<Record<string, number>>;
    }
  /**
   * An operator moved a stopped or interrupted run to node `to` (`resume(..., { goto })`): its
   * pending activations (`dropped`) go, `to` gets a fresh activation on the state as it stands.
   * It continues the run as `resumed` does, with the same optional new deadline and step limit.
   */
  | {
      readonly type: 'moved';
      readonly to: string;
      readonly dropped: readonly string[];
      /**
       * The nodes that had run, by their highest activation number (`draft: 1`), so a node run
       * again after the move gets a new id (`draft:2`): its effects are new, its completion not
       * a second one of `draft:1`. Absent on events stored before it was recorded.
       */
      readonly ran?: Readonly<Record<string, number>>;
      readonly deadlineAt?: number | null;
      readonly timeoutMs?: number;
      readonly maxSteps?: number;
    }
  /** A sleep node's activation sleeps until `until` (ms since the epoch): what its timer says. */
  | { readonly type: 'slept'; readonly activation: string; readonly until: number }
  /** Stored state was upgraded to the graph's state schema version before resuming. */
  | {
      readonly type: 'migrated';
      readonly from: number;
      readonly to: number;
      readonly state: unknown;
    };

/** Outputs of the transition function: what the shell must do next. */
export type Command =
  /** Run this activation (at or after its `notBefore`, if it has one). */
  | { readonly type: 'execute'; readonly activation: Activation }
  /** Stop these in-flight activations (losing branches, a failed join); their results are ignored. */
  | { readonly type: 'abort'; readonly activations: readonly string[] }
  /** Record that this activation waits for an answer (idempotent: re-opening keeps the first). */
  | { readonly type: 'wait'; readonly activation: Activation }
  /** These waits will never be applied (their branch was cancelled, or the run): close them. */
  | { readonly type: 'closeWaits'; readonly requestIds: readonly string[] }
  /** This activation sleeps: set its timer (its `sleeping.until`), or learn its time first. */
  | { readonly type: 'sleep'; readonly activation: Activation }
  /** These sleeps are over (woken, or dropped with their branch or run): clear their timers. */
  | { readonly type: 'endSleeps'; readonly activations: readonly string[] };

/** What became of the activation an event was about, for the trace. */
export interface Outcome {
  readonly activation: Activation;
  readonly status: 'succeeded' | 'failed';
  readonly error?: ErrorValue;
  /** True when the failed attempt will be tried again. */
  readonly retrying: boolean;
}

/** The next snapshot, what the shell must do, and what became of the event's activation. */
export interface StepResult {
  readonly snapshot: Snapshot;
  readonly commands: readonly Command[];
  readonly outcome?: Outcome;
}
