import type { RunStatus } from '../core/snapshot.js';

/** What a worker did, as it does it: a CLI prints it, a test counts it. */
export type WorkerEvent =
  /** A commit of a run this worker folded or drives. */
  | {
      readonly type: 'folded';
      readonly runId: string;
      readonly committed: number;
      readonly status: RunStatus;
    }
  /** An attempt this worker ran, and whether its result was recorded. */
  | {
      readonly type: 'task';
      readonly runId: string;
      readonly activation: string;
      readonly recorded: boolean;
    }
  /** Work this worker stopped: another process has it now, or may take it any moment. */
  | { readonly type: 'lost'; readonly runId: string; readonly activation?: string }
  | { readonly type: 'error'; readonly error: unknown };
