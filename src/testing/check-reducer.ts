import { inspect, isDeepStrictEqual } from 'node:util';
import { type Arbitrary, check, property, tuple } from 'fast-check';
import type { Reducer } from '../graph/reducers.js';

/**
 * Whether one law held on every generated case, or the smallest case fast-check found where it
 * did not: `left` and `right` are the two sides of the law, which should have been equal.
 *
 * @example
 * const law: LawResult<number> = { holds: false, counterexample: { inputs: [1], left: 2, right: 1 } };
 */
export type LawResult<T> =
  | { readonly holds: true }
  | {
      readonly holds: false;
      readonly counterexample: {
        readonly inputs: readonly T[];
        readonly left: T;
        readonly right: T;
      };
    };

/**
 * What {@link checkReducer} found, as plain data (it can be logged, snapshotted or serialised).
 *
 * @example
 * const report: ReducerReport<number> = checkReducer(sum, fc.integer());
 */
export interface ReducerReport<T> {
  /** The name of the reducer checked. */
  readonly reducer: string;
  /** `apply(a, b)` equals `apply(b, a)`. */
  readonly commutative: LawResult<T>;
  /** `apply(apply(a, b), c)` equals `apply(a, apply(b, c))`. */
  readonly associative: LawResult<T>;
  /** `apply(a, a)` equals `a`. */
  readonly idempotent: LawResult<T>;
  /**
   * For a reducer that removes (`remove()` in an update), checked when `removes` is given:
   * removing the same items twice equals removing them once, and two removals give the same
   * list in either order (so branches removing side by side agree at the join). The inputs are
   * the list and the removals' items.
   */
  readonly removal?: LawResult<unknown>;
}

/**
 * Options of {@link checkReducer}.
 *
 * @example
 * checkReducer(sum, fc.integer(), { numRuns: 1000, seed: 42 });
 */
export interface CheckReducerOptions {
  /** Generated cases per law; default 200. */
  readonly numRuns?: number;
  /** Fixes the generated cases, so a report can be reproduced. */
  readonly seed?: number;
  /** Items a `remove()` names (keys for `mergeByKey`): checks the removal laws too. */
  readonly removes?: Arbitrary<readonly unknown[]>;
}

/**
 * Checks a reducer against the three laws that decide how it behaves when branches merge, on
 * values drawn from `arbitrary` (deep equality, inputs deeply frozen as the runtime passes them).
 * Throws if the reducer throws, naming the inputs, and says so when it mutated its arguments.
 *
 * @example
 * import fc from 'fast-check';
 * import { sum } from 'waymark';
 * import { checkReducer } from 'waymark/testing';
 * expect(checkReducer(sum, fc.integer()).commutative).toEqual({ holds: true });
 */
export function checkReducer<T>(
  reducer: Reducer<T>,
  arbitrary: Arbitrary<T>,
  options: CheckReducerOptions = {},
): ReducerReport<T> {
  // The runtime freezes the state after every merge, so intermediate results are frozen too.
  const frozen: Apply<T> = (current, update) => deepFreeze(reducer.apply(current, update));
  const law = (arity: number, sides: Sides<T>): LawResult<T> => {
    const inputsArbitrary = tuple(...Array.from({ length: arity }, () => arbitrary));
    const run = check(
      property(inputsArbitrary, (inputs) => {
        const [left, right] = sides(frozen, inputs.map(deepFreeze));
        return isDeepStrictEqual(left, right);
      }),
      {
        numRuns: options.numRuns ?? 200,
        ...(options.seed === undefined ? {} : { seed: options.seed }),
      },
    );
    if (!run.failed || run.counterexample === null) return { holds: true };
    // fast-check shrank the failing case; evaluate it once more to report both sides as data.
    const [inputs] = run.counterexample;
    try {
      const [left, right] = sides(frozen, inputs);
      return { holds: false, counterexample: { inputs, left, right } };
    } catch (error) {
      throw explain(reducer, sides, inputs, error);
    }
  };
  const report = {
    reducer: reducer.name,
    commutative: law(2, (f, [a, b]) => [f(a!, b!), f(b!, a!)]),
    associative: law(3, (f, [a, b, c]) => [f(f(a!, b!), c!), f(a!, f(b!, c!))]),
    idempotent: law(1, (f, [a]) => [f(a!, a!), a!]),
  };
  const { removes } = options;
  if (removes === undefined || reducer.remove === undefined) return report;
  const take = (list: unknown, items: readonly unknown[]) =>
    deepFreeze(reducer.remove!(list as T, items));
  const run = check(
    property(tuple(arbitrary, removes, removes), ([list, xs, ys]) => {
      const a = deepFreeze(list);
      const once = take(a, xs);
      return (
        isDeepStrictEqual(take(once, xs), once) &&
        isDeepStrictEqual(take(once, ys), take(take(a, ys), xs))
      );
    }),
    {
      numRuns: options.numRuns ?? 200,
      ...(options.seed === undefined ? {} : { seed: options.seed }),
    },
  );
  if (!run.failed || run.counterexample === null) return { ...report, removal: { holds: true } };
  const [[list, xs, ys]] = run.counterexample;
  const once = take(deepFreeze(list), xs);
  const twice = isDeepStrictEqual(take(once, xs), once);
  return {
    ...report,
    removal: {
      holds: false,
      counterexample: twice
        ? { inputs: [list, xs, ys], left: take(once, ys), right: take(take(list, ys), xs) }
        : { inputs: [list, xs], left: take(once, xs), right: once },
    },
  };
}

type Apply<T> = (current: T, update: T) => T;
type Sides<T> = (apply: Apply<T>, inputs: readonly T[]) => readonly [T, T];

// A throw is a broken reducer, not a law that fails, so it is not folded into the report. If the
// same case passes on unfrozen copies, the throw was a write to a frozen argument: say so plainly.
function explain<T>(reducer: Reducer<T>, sides: Sides<T>, inputs: readonly T[], error: unknown) {
  let mutated = false;
  try {
    sides((a, b) => reducer.apply(a, b), structuredClone(inputs));
    mutated = true;
  } catch {
    // Still throws (or the inputs cannot be cloned): the original error is the whole story.
  }
  const why = mutated
    ? 'mutated its arguments (reducers must return a new value; their inputs may be frozen)'
    : 'threw';
  const shown = inspect(inputs, { depth: 6, breakLength: Number.POSITIVE_INFINITY });
  return new Error(`reducer "${reducer.name}" ${why} on inputs ${shown}: ${String(error)}`, {
    cause: error,
  });
}

function deepFreeze<T>(value: T): T {
  if (typeof value !== 'object' || value === null || Object.isFrozen(value)) return value;
  // Typed arrays with elements cannot be frozen; they pass through, as in the runtime.
  if (ArrayBuffer.isView(value)) return value;
  Object.freeze(value);
  for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key]);
  return value;
}
