import type { RateLimit, SpendLimits } from './types.js';

/** What a node is for; the scheduler reads a kind's traits, never the kind itself. */
export type NodeKind = 'code' | 'model' | 'person' | 'effect' | 'subgraph' | 'sleep' | 'event';

/** What a node kind needs from the runtime, as data (no `if (kind === ...)` in shared code). */
export interface KindTraits {
  /** Whether a failed attempt may be tried again under the node's retry policy. */
  readonly retryable: boolean;
  /** Whether the node stops the run for an outside answer (persons, external events). */
  readonly opensWait: boolean;
  /** Whether the node acts on the outside world, so its effects go through the ledger. */
  readonly hasEffects: boolean;
}

export const kindTraits: Readonly<Record<NodeKind, KindTraits>> = {
  code: { retryable: true, opensWait: false, hasEffects: false },
  model: { retryable: true, opensWait: false, hasEffects: false },
  // A person's answer is not retried: asking twice is a new question, not a new attempt.
  person: { retryable: false, opensWait: true, hasEffects: false },
  effect: { retryable: true, opensWait: false, hasEffects: true },
  // A subgraph's mappings are deterministic, so they are not retried; its nodes retry inside.
  subgraph: { retryable: false, opensWait: false, hasEffects: false },
  // A sleep runs no body: it is woken when its timer is due, so there is nothing to retry.
  sleep: { retryable: false, opensWait: false, hasEffects: false },
  // An event is delivered, not run: like a person's answer, there is no attempt to retry.
  event: { retryable: false, opensWait: true, hasEffects: false },
};

export const nodeKinds = Object.keys(kindTraits) as readonly NodeKind[];

// Symbol.for: a node function made by another copy of the package is still recognised.
const kindMarker = Symbol.for('waymark.nodeKind');

/**
 * Marks a node function with the kind it is, so `.node(name, fn)` needs no `{ kind }` option:
 * `model()` and `agent()` return functions marked `model`.
 *
 * @example
 * return markKind((state, ctx) => call(state, ctx), 'model');
 */
export function markKind<F extends (...args: never[]) => unknown>(fn: F, kind: NodeKind): F {
  Object.defineProperty(fn, kindMarker, { value: kind });
  return fn;
}

/** The kind a node function was marked with, if any. */
export function kindOf(fn: unknown): NodeKind | undefined {
  return typeof fn === 'function'
    ? ((fn as unknown as Record<symbol, NodeKind | undefined>)[kindMarker] ?? undefined)
    : undefined;
}

const spendMarker = Symbol.for('waymark.nodeSpend');
const rateMarker = Symbol.for('waymark.nodeRateLimit');

/**
 * Marks a node function with the shared quota its attempts count against, so `.node()` finds
 * it without a `rateLimit` option: `model()` and `agent()` mark theirs when given one.
 *
 * @example
 * return markRate(node, { resource: 'openai', requestsPerMinute: 500 });
 */
export function markRate<F extends (...args: never[]) => unknown>(fn: F, rate: RateLimit): F {
  Object.defineProperty(fn, rateMarker, { value: rate });
  return fn;
}

/** The quota a node function was marked with, if any. */
export function rateOf(fn: unknown): RateLimit | undefined {
  return typeof fn === 'function'
    ? ((fn as unknown as Record<symbol, RateLimit | undefined>)[rateMarker] ?? undefined)
    : undefined;
}

/**
 * Marks a node function with what one of its attempts may spend, so the cost bound knows it
 * without a `spend` option: `model()` and `agent()` mark theirs.
 *
 * @example
 * return markSpend(markKind(node, 'model'), { calls: 3, maxTokens: 8_000 });
 */
export function markSpend<F extends (...args: never[]) => unknown>(fn: F, spend: SpendLimits): F {
  Object.defineProperty(fn, spendMarker, { value: spend });
  return fn;
}

/** What a node function was marked as spending per attempt, if anything. */
export function spendOf(fn: unknown): SpendLimits | undefined {
  return typeof fn === 'function'
    ? ((fn as unknown as Record<symbol, SpendLimits | undefined>)[spendMarker] ?? undefined)
    : undefined;
}
