import type { ErrorValue } from '../../error/error-value.js';
import type { RuntimeNode } from '../../graph/compiled.js';
import { withoutNotBefore } from './activations.js';
import { backoffDelay, capOf, defaultRetryOn } from './backoff.js';
import { callUser } from './call-user.js';
import { defaultRetryWhen, retryAfterMs } from './retry-when.js';
import type { Activation } from './snapshot.js';

/**
 * Whether a failed attempt gets another: a node kind that may be retried, attempts left, an
 * error class the policy retries, and the policy's predicate saying yes (its own `when`, else
 * {@link defaultRetryWhen}). A predicate that throws decides nothing: the error stands as it
 * is, not retried.
 *
 * @example
 * if (retries(node, activation, error)) pending[i] = nextAttempt(node, activation, failedAt);
 */
export function retries(node: RuntimeNode, activation: Activation, error: ErrorValue): boolean {
  const policy = node.def.retry;
  if (!node.traits.retryable || policy === undefined || activation.attempt >= policy.attempts)
    return false;
  const retryOn: readonly string[] = policy.retryOn ?? defaultRetryOn;
  if (!retryOn.includes(error.class)) return false;
  const when = node.retryWhen ?? defaultRetryWhen;
  const decided = callUser(() => when(error));
  return decided.ok && decided.value === true;
}

/**
 * The next attempt of a failed activation, due its backoff after the failure (`at`, from the
 * failed event), or later if the failure's `Retry-After` asked for longer (never past the
 * policy's `maxBackoffMs`): a time in the snapshot, not a sleep, so whoever drives the run next
 * knows it.
 *
 * @example
 * nextAttempt(node, { id: 'plan:1', attempt: 1, ... }, error, 5_000); // attempt 2, notBefore 5_000 + backoff
 */
export function nextAttempt(
  node: RuntimeNode,
  activation: Activation,
  error: ErrorValue,
  at: number | undefined,
): Activation {
  const policy = node.def.retry!;
  const asked = retryAfterMs(error, at);
  const backoff = backoffDelay(policy, activation.attempt);
  const delay = asked === undefined ? backoff : Math.max(backoff, Math.min(asked, capOf(policy)));
  const attempt = activation.attempt + 1;
  return delay > 0 && at !== undefined
    ? { ...activation, attempt, notBefore: at + delay }
    : withoutNotBefore({ ...activation, attempt });
}
