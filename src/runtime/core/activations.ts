import type { Activation, Blocked, RunEvent, Snapshot } from './snapshot.js';

// Small rules about pending activations that the transition and its helpers share.

/**
 * An event about an activation that is not pending, or about another attempt than the pending
 * one: a late result after a timeout, the result of a worker whose lease expired. It changes
 * nothing, and the very same snapshot comes back, so a driver knows there is nothing to commit.
 *
 * @example
 * if (isStale(snapshot, event)) return { snapshot, commands: [] };
 */
export function isStale(snapshot: Snapshot, event: RunEvent): boolean {
  const type = event.type;
  if (type !== 'completed' && type !== 'failed' && type !== 'answered' && type !== 'slept')
    return false;
  const pending = snapshot.pending.find((a) => a.id === event.activation);
  if (pending === undefined || pending.blocked !== undefined) return true;
  if (type === 'answered') return pending.waiting === undefined;
  // A sleep learns its time once; a wake is a completion of the sleeping activation.
  if (type === 'slept')
    return pending.sleeping === undefined || pending.sleeping.until !== undefined;
  if (event.type === 'completed' && pending.waiting !== undefined) return true;
  return event.attempt !== undefined && event.attempt !== pending.attempt;
}

/**
 * Where an error value of this activation belongs.
 *
 * @example
 * errorValue(where(activation), 'ROUTE_UNDECLARED', 'permanent', message);
 */
export function where(activation: Activation) {
  return { node: activation.node, activation: activation.id, attempt: activation.attempt };
}

/**
 * The activation kept, blocked, for a resume: a capped one (never admitted, attempt 0), or a
 * completed one whose router failed (its attempt stands).
 *
 * @example
 * pending.push(blocked(activation, 'route'));
 */
export function blocked(activation: Activation, kind: 'enqueue' | 'route'): Activation {
  return { ...activation, attempt: kind === 'enqueue' ? 0 : activation.attempt, blocked: kind };
}

/**
 * A pending activation of a failed run, tried again from its first attempt.
 *
 * @example
 * const again = restart(activation); // attempt 1, no backoff
 */
export function restart(activation: Activation): Activation {
  return withoutNotBefore({ ...activation, attempt: 1 });
}

/**
 * The activation with no backoff left to wait out.
 *
 * @example
 * withoutNotBefore({ ...activation, attempt: 2 });
 */
export function withoutNotBefore(activation: Activation): Activation {
  if (activation.notBefore === undefined) return activation;
  const { notBefore: _n, ...rest } = activation;
  return rest;
}

/**
 * Whether nothing can happen until someone answers or a time comes: every pending activation
 * waits for a person, sleeps, is paused at a breakpoint or is kept blocked for a resume, and
 * one at least waits, sleeps or is paused. The run is then `waiting`, and no process needs to
 * stay.
 *
 * @example
 * if (status === 'running' && onlyWaiting(pending)) status = 'waiting';
 */
export function onlyWaiting(pending: readonly Activation[]): boolean {
  return (
    pending.every(
      (a) =>
        a.waiting !== undefined ||
        a.sleeping !== undefined ||
        a.blocked !== undefined ||
        a.paused === true,
    ) &&
    pending.some((a) => a.waiting !== undefined || a.sleeping !== undefined || a.paused === true)
  );
}

/**
 * The event that wakes a sleeping activation: its completion, with no update.
 *
 * @example
 * if (activation.sleeping.until <= now) events.push(wakeOf(activation));
 */
export function wakeOf(activation: Activation): RunEvent {
  return {
    type: 'completed',
    activation: activation.id,
    attempt: activation.attempt,
    update: undefined,
  };
}

/**
 * The index of `id` at `attempt` in `pending`; -1 for a stale event (gone, or another attempt).
 *
 * @example
 * const index = pendingIndex(pending, 'draft:1', 2);
 */
export function pendingIndex(
  pending: readonly Activation[],
  id: string,
  attempt: number | undefined,
): number {
  const index = pending.findIndex((a) => a.id === id);
  if (index === -1 || attempt === undefined) return index;
  return pending[index]!.attempt === attempt ? index : -1;
}

/**
 * Marks a pending activation, in place, as kept for a resume, not as work in flight.
 *
 * @example
 * keepBlocked(pending, 'map[2]/fix:1', 'branch');
 */
export function keepBlocked(pending: Activation[], id: string, kind: Blocked): void {
  const index = pending.findIndex((a) => a.id === id);
  if (index !== -1) pending[index] = { ...pending[index]!, blocked: kind };
}
