import type { z } from 'zod';
import { WaymarkError } from '../error/waymark-error.js';
import { type PersonNode, person, waitNode, waitSpecOf } from './person.js';

/** What an event node waits for, and what its payload must look like. */
export interface EventOptions<S, P> {
  /** The signal's name: `signal(store, target, name, payload)` names it. */
  readonly name: string;
  /** The payload's schema: `signal()` refuses anything else (`SIGNAL_INVALID`), recording nothing. */
  readonly schema: z.ZodType<P>;
  /**
   * Which instance of the graph a `{ graph, key }` signal is for (an order id, a customer id),
   * from the state the node sees; called once, when the wait opens.
   */
  readonly key?: (state: Readonly<S>) => string;
  /** Turns the payload into a state update; by default the payload object is the update. */
  readonly update?: (payload: P, state: Readonly<S>) => Partial<S> | undefined;
  /** No signal this long after the wait opened: the node fails with `WAIT_TIMED_OUT`. */
  readonly timeoutMs?: number;
  /** A time from the state when the wait closes unsignalled, as with `timeoutMs`. */
  readonly deadline?: (state: Readonly<S>) => Date | number;
}

/** A node function that waits for an external event; the runtime never calls it. */
export type EventNode<S> = PersonNode<S>;

/**
 * A stop point for something outside (a payment provider's webhook, another system's reply):
 * the run is `waiting` on a wait for the named event and no process is held. A
 * `signal(store, runId | { graph, key }, name, payload)` delivers it once: the payload, checked
 * by `schema`, is the node's update, as a person's answer is. A signal sent before the run gets
 * here is kept and taken when it does.
 *
 * @example
 * .node('paid', event({
 *   name: 'payment',
 *   schema: z.object({ paidCents: z.number().int() }),
 *   key: (s) => s.orderId,
 *   timeoutMs: 86_400_000,
 * }))
 */
export function event<S, P>(options: EventOptions<S, P>): EventNode<S> {
  const { name, key } = options;
  if (typeof name !== 'string' || name.trim() === '') {
    throw new WaymarkError('DECLARATION_INVALID', 'event({ name }) needs a non-empty name', {
      retryable: false,
    });
  }
  if (key !== undefined && typeof key !== 'function') {
    throw new WaymarkError(
      'DECLARATION_INVALID',
      `event("${name}", { key }) takes a function of the state that returns a string`,
      { retryable: false },
    );
  }
  const asked = person<S, P>({
    prompt: (s) => (key === undefined ? `event "${name}"` : `event "${name}" for ${key(s)}`),
    answer: options.schema,
    ...(options.update !== undefined && { update: options.update }),
    ...(options.timeoutMs !== undefined && { timeoutMs: options.timeoutMs }),
    ...(options.deadline !== undefined && { deadline: options.deadline }),
  });
  const spec = waitSpecOf(asked)!;
  return waitNode<S>({
    ...spec,
    event: {
      name,
      ...(key !== undefined && { key: (state: unknown) => key(state as Readonly<S>) }),
    },
  });
}
