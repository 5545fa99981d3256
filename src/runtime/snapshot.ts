import type { ErrorValue } from '../error/error-value.js';

/** Where a run is. `running` and `waiting` can continue; the other four are final. */
export type RunStatus = 'running' | 'waiting' | 'succeeded' | 'failed' | 'cancelled' | 'timed_out';

/** One execution of one node; `id` is stable across attempts and resumes. */
export interface Activation {
  /** `node:visit`, e.g. `plan:2` for the second time `plan` runs in this run. */
  readonly id: string;
  readonly node: string;
  /** 1 for the first attempt. */
  readonly attempt: number;
  /** The activation whose completion scheduled this one; null for the entry. */
  readonly parent: string | null;
  /** Set when the activation was reached through an `onError` route. */
  readonly error?: ErrorValue;
}

/** Run-level caps, fixed at start and kept in the snapshot so a resume enforces the same ones. */
export interface RunLimits {
  /** Most completed activations in the run. */
  readonly maxSteps: number;
}

interface SnapshotBase {
  readonly runId: string;
  /** The business state, deeply frozen. */
  readonly state: Readonly<Record<string, unknown>>;
  /** Activations scheduled and not yet completed, in scheduling order. */
  readonly pending: readonly Activation[];
  /** How many activations each node has had (a cap counts these). */
  readonly visits: Readonly<Record<string, number>>;
  /** Completed activations so far. */
  readonly steps: number;
  /** Every error value recorded, oldest first. */
  readonly errors: readonly ErrorValue[];
  readonly limits: RunLimits;
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
  | { readonly type: 'completed'; readonly activation: string; readonly update: unknown }
  | { readonly type: 'failed'; readonly activation: string; readonly error: ErrorValue }
  | { readonly type: 'cancelled'; readonly reason: string }
  | { readonly type: 'deadline'; readonly timeoutMs: number };

/** Outputs of the transition function: what the shell must do next. */
export type Command = {
  readonly type: 'execute';
  readonly activation: Activation;
  readonly delayMs: number;
};

/** What became of the activation an event was about, for the trace. */
export interface Outcome {
  readonly activation: Activation;
  readonly status: 'succeeded' | 'failed';
  readonly error?: ErrorValue;
  /** True when the failed attempt will be tried again. */
  readonly retrying: boolean;
}
