import { WaymarkError } from '../error/waymark-error.js';
import type { Report } from './diagnostic.js';
import type { GraphDef } from './types.js';
import { isPositiveInt, show } from './validate-options.js';

/**
 * A graph's concurrency limit (the graph option `limits`): at most `concurrency` runs of the
 * graph with the same key are running at once, across every process that shares the store.
 * The key is read from the run's start state (its input, parsed) once, when the run is created.
 *
 * @example
 * graph('support', { state: State, limits: { key: (input) => input.customerId, concurrency: 2 } })
 */
export interface ConcurrencyLimit<S = Record<string, unknown>> {
  /** The run's key: runs with the same key share the limit. A string of 1 to 200 characters. */
  readonly key: (input: Readonly<S>) => string;
  /** How many runs of one key may be running at once: a whole number >= 1. */
  readonly concurrency: number;
}

/** The limit as data in the graph's declaration: the key function is noted, not kept. */
export interface ConcurrencyLimitDef {
  readonly concurrency: number;
  readonly key: true;
}

/** The longest key a run may be limited by. */
export const maxLimitKeyLength = 200;

/**
 * The declaration's copy of a `limits` option: a key function becomes `true`; anything else is
 * kept as given, for the validator to report.
 *
 * @example
 * limitsDef({ key: (s) => s.customerId, concurrency: 2 }); // { concurrency: 2, key: true }
 */
export function limitsDef(limits: unknown): ConcurrencyLimitDef {
  if (typeof limits !== 'object' || limits === null) return limits as never;
  const { key, concurrency } = limits as { key?: unknown; concurrency?: unknown };
  return { concurrency, key: typeof key === 'function' ? true : key } as ConcurrencyLimitDef;
}

/**
 * Reports a `limits` option that cannot be honoured: OPTION_INVALID, naming the rule.
 *
 * @example
 * checkLimits(def, report);
 */
export function checkLimits(def: GraphDef, report: Report): void {
  const limits = def.limits as { concurrency?: unknown; key?: unknown } | null | undefined;
  if (limits === undefined) return;
  const bad = (option: string, value: unknown, rule: string) =>
    report('OPTION_INVALID', `the graph has ${option} = ${show(value)}; ${rule}`);
  if (typeof limits !== 'object' || limits === null) {
    bad(
      'limits',
      limits,
      'it must be an object such as { key: (input) => input.customerId, concurrency: 2 }',
    );
    return;
  }
  if (!isPositiveInt(limits.concurrency))
    bad('limits.concurrency', limits.concurrency, 'it must be a whole number >= 1');
  if (limits.key !== true)
    bad('limits.key', limits.key, 'it must be a function of the input that returns a string');
}

/**
 * The key a new run of the graph is limited by, from its start state.
 * @throws WaymarkError `LIMIT_KEY_INVALID` when the key function throws, or returns anything but
 *   a string of 1 to 200 characters; nothing is recorded.
 *
 * @example
 * limitKeyOf('support', limit, { customerId: 'c1' }); // 'c1'
 */
export function limitKeyOf(graph: string, limit: ConcurrencyLimit, state: unknown): string {
  let key: unknown;
  try {
    key = limit.key(state as Record<string, unknown>);
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    throw keyInvalid(graph, `threw: ${why}`, error);
  }
  if (typeof key !== 'string' || key.length === 0 || key.length > maxLimitKeyLength)
    throw keyInvalid(
      graph,
      `returned ${show(key)}; it must return a string of 1 to ${maxLimitKeyLength} characters`,
    );
  return key;
}

function keyInvalid(graph: string, what: string, cause?: unknown): WaymarkError {
  return new WaymarkError(
    'LIMIT_KEY_INVALID',
    `the limits.key function of graph "${graph}" ${what}; the run was not created`,
    { retryable: false, details: { graph }, ...(cause instanceof Error && { cause }) },
  );
}
