import { errorValue } from '../../error/error-value.js';
import type { RuntimeNode } from '../../graph/compiled.js';
import type { RateStore } from '../../store/rates.js';
import type { Clock } from '../clock.js';
import { retryAfterMs } from '../core/retry-when.js';
import type { Activation } from '../core/snapshot.js';
import { type Attempt, failedAttempt, toErrorValue } from './execute.js';

/** The admission's id: one per attempt, so a host that runs the attempt again is not counted twice. */
function admissionId(runId: string, activation: Activation): string {
  return `${runId}/${activation.id}#${activation.attempt}`;
}

/**
 * Asks the store to admit an attempt of a rate-limited node before its body runs: undefined to
 * go on (admitted, or the node has no `rateLimit`, or nothing keeps rates), else the attempt it
 * ends in without starting: `RATE_LIMITED` with `until`, which the transition turns into a
 * durable sleep of the same attempt, or the store's own error (a transient one is retried as
 * any attempt's).
 *
 * @example
 * const refused = await admitAttempt(store, node, activation, runId, clock);
 * if (refused !== undefined) return refused;
 */
export async function admitAttempt(
  rates: RateStore | undefined,
  node: RuntimeNode,
  activation: Activation,
  runId: string,
  clock: Clock,
): Promise<Attempt | undefined> {
  const limit = node.def.rateLimit;
  if (limit === undefined || rates === undefined) return undefined;
  const at = clock.now();
  let decision: Awaited<ReturnType<RateStore['admitRate']>>;
  try {
    decision = await rates.admitRate({
      resource: limit.resource,
      id: admissionId(runId, activation),
      at,
      now: () => clock.now(),
      ...(limit.requestsPerMinute !== undefined && { requestsPerMinute: limit.requestsPerMinute }),
      ...(limit.tokensPerMinute !== undefined && { tokensPerMinute: limit.tokensPerMinute }),
      reserveTokens: node.def.spend?.maxTokens ?? 0,
    });
  } catch (error) {
    return failedAttempt(activation, toErrorValue(error, activation), at, at);
  }
  if (decision.admitted) return undefined;
  const { until, reason } = decision;
  const full =
    reason === 'blocked'
      ? 'is blocked by a 429'
      : `has no room for another ${reason === 'requests' ? 'request' : "attempt's tokens"}`;
  const message = `rate limit "${limit.resource}" ${full} until ${new Date(until).toISOString()}`;
  const where = { node: activation.node, activation: activation.id, attempt: activation.attempt };
  const error = errorValue(where, 'RATE_LIMITED', 'transient', message, {
    resource: limit.resource,
    until,
    reason,
  });
  return failedAttempt(activation, error, at, at);
}

/**
 * How an attempt of a rate-limited node admits its provider calls after the first (a model
 * node's schema retries, an agent's turns), each a request of its own under the attempt's id
 * and its number: a call the window has no room for waits inside the attempt, on its clock,
 * until it has (the attempt has begun a conversation that cannot be put down and picked up).
 * Its tokens are the attempt's, settled on its first admission. Undefined when nothing limits.
 *
 * @example
 * const admitCall = callAdmitter(store, node, activation, runId, clock);
 */
export function callAdmitter(
  rates: RateStore | undefined,
  node: RuntimeNode,
  activation: Activation,
  runId: string,
  clock: Clock,
): ((call: number, signal: AbortSignal) => Promise<void>) | undefined {
  const limit = node.def.rateLimit;
  if (limit === undefined || rates === undefined) return undefined;
  const id = admissionId(runId, activation);
  return async (call, signal) => {
    for (;;) {
      const at = clock.now();
      const decision = await rates.admitRate({
        resource: limit.resource,
        id: `${id}.${call}`,
        at,
        now: () => clock.now(),
        ...(limit.requestsPerMinute !== undefined && {
          requestsPerMinute: limit.requestsPerMinute,
        }),
        ...(limit.tokensPerMinute !== undefined && { tokensPerMinute: limit.tokensPerMinute }),
      });
      if (decision.admitted) return;
      await clock.sleep(Math.max(1, decision.until - at), signal);
      signal.throwIfAborted();
    }
  };
}

/**
 * What an admitted attempt tells its resource's window when it ends: the tokens it recorded
 * (replacing what was reserved), and a 429's `Retry-After`, which blocks the resource for every
 * run until then. A store error here is not the attempt's: the attempt is recorded all the same,
 * and the window keeps the reservation.
 *
 * @example
 * await settleAttempt(store, node, activation, runId, attempt);
 */
export async function settleAttempt(
  rates: RateStore | undefined,
  node: RuntimeNode,
  activation: Activation,
  runId: string,
  attempt: Attempt,
): Promise<void> {
  const limit = node.def.rateLimit;
  if (limit === undefined || rates === undefined) return;
  const { event } = attempt;
  if (event.type === 'failed' && event.error.code === 'RATE_LIMITED') return;
  try {
    const usage = event.usage;
    const reserved = node.def.spend?.maxTokens ?? 0;
    const used = usage === undefined ? 0 : usage.inputTokens + usage.outputTokens;
    if (used !== reserved)
      await rates.settleRate(limit.resource, admissionId(runId, activation), used);
    if (event.type === 'failed' && statusOf(event.error.details) === 429) {
      const wait = retryAfterMs(event.error, attempt.endedAt);
      if (wait !== undefined && wait > 0)
        await rates.blockRate(limit.resource, attempt.endedAt + wait);
    }
  } catch {
    // The attempt happened whatever the window says: settling again cannot be asked of anyone.
  }
}

function statusOf(details: unknown): unknown {
  return typeof details === 'object' && details !== null
    ? (details as { status?: unknown }).status
    : undefined;
}
