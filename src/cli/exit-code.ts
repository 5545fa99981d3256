import type { RunStatus } from '../runtime/core/snapshot.js';

/** The `waymark` command's exit codes; docs/cli.md documents them. */
export const exitCode = {
  succeeded: 0,
  /** The run failed, timed out or was cancelled (or the graph file's validation failed). */
  failed: 1,
  /** Usage or input the command could not act on: nothing was run or recorded. */
  usage: 2,
  /** The run waits for a person. */
  waiting: 3,
} as const;

/** The exit code for how a run stands. */
export function exitCodeOf(status: RunStatus): number {
  switch (status) {
    case 'succeeded':
      return exitCode.succeeded;
    case 'waiting':
      return exitCode.waiting;
    case 'running':
    case 'failed':
    case 'cancelled':
    case 'timed_out':
      return exitCode.failed;
  }
}
