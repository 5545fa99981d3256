import { z } from 'zod';
import type { NodeFn } from './types.js';

const marker = Symbol.for('waymark.person');

/** What a person is asked, and what an answer must look like. */
export interface PersonOptions<S, A> {
  /** The question, shown by `waymark show` and stored with the wait. */
  readonly prompt: string | ((state: Readonly<S>) => string);
  /** The answer's schema: `answer()` refuses anything else, recording nothing. */
  readonly answer: z.ZodType<A>;
  /** Turns the answer into a state update; by default the answer object is the update. */
  readonly update?: (answer: A, state: Readonly<S>) => Partial<S> | undefined;
  /**
   * Unanswered this long after it opened, the wait is closed by whoever hosts the run and the
   * node fails with `WAIT_TIMED_OUT` (its `onError` route is the escalation).
   */
  readonly timeoutMs?: number;
  /**
   * A time from the state (a `Date` or ms since the epoch) when the wait closes unanswered, as
   * with `timeoutMs`; with both, whichever comes first. Called once, when the wait opens.
   */
  readonly deadline?: (state: Readonly<S>) => Date | number;
}

/** The wait a person node opens, as the runtime reads it. */
export interface WaitSpec {
  readonly prompt: (state: unknown) => string;
  readonly answer: z.ZodType;
  readonly update: (answer: unknown, state: unknown) => unknown;
  readonly timeoutMs: number | undefined;
  readonly deadline?: (state: unknown) => Date | number;
  /** The answer schema as JSON Schema, stored with the wait; null if it cannot be expressed. */
  readonly schema: unknown;
  /**
   * With no `update`, the answer object is the update: its fields, for the validator to check
   * against the state's. Absent with an `update`, or when the schema is not a zod object.
   */
  readonly answers?: readonly string[];
  /** An event node's wait (`event()`): the signal name it takes, and which instance it is. */
  readonly event?: EventSpec;
}

/** What an event node waits for: a signal's name, and the key a `{ graph, key }` signal names. */
export interface EventSpec {
  readonly name: string;
  readonly key?: (state: unknown) => string;
}

/** A node function that is a person's stop point; the runtime never calls it. */
export type PersonNode<S> = NodeFn<S, Partial<S>> & { readonly [marker]: WaitSpec };

/**
 * A stop point for a person: the run opens a wait with a stable request id, its status becomes
 * `waiting`, and the process may exit. `answer()` records the answer; `resume()` continues with
 * the answer applied as the node's update, then routes like any node.
 *
 * @example
 * .node('approve', person({
 *   prompt: (s) => `Publish "${s.title}"?`,
 *   answer: z.object({ approved: z.boolean(), note: z.string().default('') }),
 * }))
 * .route('approve', (s) => (s.approved ? 'publish' : 'draft'), ['publish', 'draft'])
 */
export function person<S, A>(options: PersonOptions<S, A>): PersonNode<S> {
  let schema: unknown = null;
  try {
    schema = z.toJSONSchema(options.answer);
  } catch {
    // Transforms and custom checks have no JSON Schema; answer() then needs the graph.
  }
  const { prompt, update } = options;
  const spec: WaitSpec = {
    prompt: (state) => (typeof prompt === 'function' ? prompt(state as Readonly<S>) : prompt),
    answer: options.answer,
    update: update
      ? (answer, state) => update(answer as A, state as Readonly<S>)
      : (answer) => answer,
    timeoutMs: options.timeoutMs,
    ...(options.deadline !== undefined && {
      deadline: (state: unknown) => options.deadline!(state as Readonly<S>),
    }),
    schema,
    ...(update === undefined &&
      options.answer instanceof z.ZodObject && { answers: Object.keys(options.answer.shape) }),
  };
  return waitNode<S>(spec);
}

/**
 * A node function carrying a wait spec: a person's, or an event's (event.ts builds on it).
 *
 * @example
 * const node = waitNode({ ...waitSpecOf(person(options))!, event: { name: 'paid' } });
 */
export function waitNode<S>(spec: WaitSpec): PersonNode<S> {
  const node = (() => {
    throw new Error('waymark internal: a wait node is answered, never called');
  }) as unknown as PersonNode<S>;
  return Object.assign(node, { [marker]: spec });
}

/** The wait spec of a person node function, if it is one. */
export function waitSpecOf(fn: unknown): WaitSpec | undefined {
  return typeof fn === 'function' ? (fn as Partial<PersonNode<unknown>>)[marker] : undefined;
}
