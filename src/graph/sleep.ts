import { WaymarkError } from '../error/waymark-error.js';
import { type Duration, parseDuration } from './duration.js';
import { markKind } from './kinds.js';
import type { NodeFn } from './types.js';

const marker = Symbol.for('waymark.sleep');

/** How long a sleep node sleeps: for a length of time, or until a time the state gives. */
export type SleepOptions<S> =
  | { readonly for: Duration; readonly until?: never }
  | { readonly until: (state: Readonly<S>) => Date | number; readonly for?: never };

/** A node's `notBefore`: the time its body may start, from the state it sees. */
export type NotBefore = (state: unknown) => Date | number;

/** The sleep a sleep node's activation takes, as the runtime reads it. */
export interface SleepSpec {
  /** Counted from when the run reaches the node. */
  readonly forMs?: number;
  /** A time (ms since the epoch) from the state the node sees; called once, when it is reached. */
  readonly until?: (state: unknown) => Date | number;
  /** A node's `notBefore`, not a sleep node: when it wakes its body runs. */
  readonly thenRun?: true;
}

/** A node function that is a durable sleep; the runtime never calls it. */
export type SleepNode<S> = NodeFn<S, Partial<S>> & { readonly [marker]: SleepSpec };

/**
 * A durable sleep: when the run reaches it, the run is `waiting` on a timer row (nothing is
 * held in memory for a long sleep), and whoever hosts the run wakes it when the time comes: a
 * worker's claim, `waymark serve`, or a `resume()` after it is due. The node then completes
 * with no update and the run goes on along its edge. `for` counts from when the node is
 * reached; `until` is a time the state says (a `Date` or ms since the epoch; one in the past
 * wakes at once).
 *
 * @example
 * .node('cool-off', sleep({ for: '2d' }))
 * .node('at-nine', sleep({ until: (s) => new Date(s.sendAt) }))
 */
export function sleep<S>(options: SleepOptions<S>): SleepNode<S> {
  const given = options as { for?: Duration; until?: unknown };
  if ((given.for === undefined) === (given.until === undefined)) {
    throw new WaymarkError(
      'DECLARATION_INVALID',
      'sleep() takes one of { for } (a length of time) or { until } (a function of the state giving a Date)',
      { retryable: false },
    );
  }
  if (given.until !== undefined && typeof given.until !== 'function') {
    throw new WaymarkError(
      'DECLARATION_INVALID',
      'sleep({ until }) takes a function of the state that returns a Date or ms since the epoch',
      { retryable: false },
    );
  }
  const spec: SleepSpec =
    given.for !== undefined
      ? { forMs: parseDuration(given.for, 'sleep({ for })') }
      : { until: given.until as (state: unknown) => Date | number };
  const node = (() => {
    throw new Error('waymark internal: a sleep node is woken, never called');
  }) as unknown as SleepNode<S>;
  return Object.assign(markKind(node, 'sleep'), { [marker]: spec });
}

/** The sleep spec of a sleep node function, if it is one. */
export function sleepSpecOf(fn: unknown): SleepSpec | undefined {
  return typeof fn === 'function' ? (fn as Partial<SleepNode<unknown>>)[marker] : undefined;
}
