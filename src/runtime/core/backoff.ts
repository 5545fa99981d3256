import { maxTimerMs } from '../../graph/limits.js';
import type { RetryPolicy } from '../../graph/types.js';

/** Error classes retried when a policy does not say: the ones that may pass on a second try. */
export const defaultRetryOn = ['transient', 'timeout'] as const;

/**
 * The wait before the attempt after `attempt`: `backoffMs * factor^(attempt-1)`, capped by
 * `maxBackoffMs`. No jitter: the schedule is a pure function of the policy, so replays agree.
 */
export function backoffDelay(policy: RetryPolicy, attempt: number): number {
  const base = policy.backoffMs ?? 0;
  const delay = base * (policy.factor ?? 2) ** (attempt - 1);
  return Math.min(delay, capOf(policy));
}

/** The longest wait a policy allows before an attempt: its `maxBackoffMs`, within the timer limit. */
export function capOf(policy: RetryPolicy): number {
  return Math.min(policy.maxBackoffMs ?? maxTimerMs, maxTimerMs);
}
