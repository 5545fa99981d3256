import { type ErrorValue, provenance } from '../../error/error-value.js';
import { isWaymarkError } from '../../error/waymark-error.js';

/**
 * The error value of a run failed because its fold kept failing: no activation failed, so it
 * names the node the run stood at when that is known (its graph's entry otherwise, or none
 * when the run could not be read at all), and carries the last cause, with its code.
 *
 * @example
 * foldFailure('r1', 'classify', new WaymarkError('STORE_CORRUPT', 'run r1: ...'), 5);
 */
export function foldFailure(
  runId: string,
  node: string,
  error: unknown,
  failures: number,
): ErrorValue {
  const code = isWaymarkError(error) ? error.code : undefined;
  const message = error instanceof Error ? error.message : String(error);
  return {
    node,
    activation: node === '' ? '' : `${node}:0`,
    attempt: 0,
    code: 'FOLD_FAILED',
    class: 'permanent',
    message: `run ${runId} could not be folded (${failures} times): ${code === undefined ? '' : `${code}: `}${message}`,
    details: { runId, failures, cause: { ...(code !== undefined && { code }), message } },
    ...provenance(error),
  };
}
