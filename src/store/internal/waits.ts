import { WaymarkError } from '../../error/waymark-error.js';

/**
 * The refusal of an answer to a wait that was closed unanswered.
 *
 * @example
 * throw waitClosed('r1', 'r1/approve:1');
 */
export function waitClosed(runId: string, requestId: string): WaymarkError {
  return new WaymarkError(
    'WAIT_CLOSED',
    `wait "${requestId}" of run "${runId}" was closed unanswered: nothing will apply an answer to it (its branch or its run was cancelled)`,
    { retryable: false, details: { runId, requestId } },
  );
}
