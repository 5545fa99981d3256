/**
 * A per-field merge `(current, update) => next`. The name is what the plain-data graph records;
 * `apply` must be pure and must not mutate either argument (both may be frozen).
 *
 * @example
 * const longest: Reducer<string> = { name: 'longest', apply: (a, b) => (b.length > a.length ? b : a) };
 */
export interface Reducer<T = unknown> {
  readonly name: string;
  // Method syntax on purpose: parameters stay bivariant so a Reducer<any[]> fits a string[] field.
  apply(current: T, update: T): T;
  /**
   * Optional: whether `update` replaces the current value whatever it is, so that folding many
   * updates may skip the ones before it (a subgraph's slot when the child is entered or left).
   */
  replaces?(update: T): boolean;
  /**
   * Optional: the value with `items` taken out, for `remove(...items)` in an update (list
   * reducers). Pure, like `apply`; a reducer without it refuses `remove()`.
   */
  remove?(current: T, items: readonly unknown[]): T;
}

/**
 * The default: the update replaces the current value.
 * Laws: associative and idempotent, not commutative (last writer wins).
 */
export const replace: Reducer<any> = { name: 'replace', apply: (_current, update) => update };

/**
 * Concatenates arrays, current first. Laws: associative; neither commutative nor idempotent.
 *
 * @example
 * graph('g', { state: z.object({ log: z.array(z.string()) }), reducers: { log: append } });
 */
export const append: Reducer<any[]> = {
  name: 'append',
  apply: (current, update) => (update.length === 0 ? current : [...(current ?? []), ...update]),
  remove: (current, items) => withoutEqual(current, items),
};

/**
 * Adds numbers. Laws: commutative; associative on integers while every partial sum stays within
 * `Number.MAX_SAFE_INTEGER` (with fractions, rounding makes grouping matter:
 * `(0.1 + 0.2) + 0.3 !== 0.1 + (0.2 + 0.3)`, so keep money in integer cents); not idempotent.
 *
 * @example
 * graph('g', { state: z.object({ costCents: z.number().int() }), reducers: { costCents: sum } });
 */
export const sum: Reducer<number> = { name: 'sum', apply: (current, update) => current + update };

/** Keeps the larger number. Laws: commutative, associative, idempotent. */
export const max: Reducer<number> = { name: 'max', apply: (a, b) => Math.max(a, b) };

/** Keeps the smaller number. Laws: commutative, associative, idempotent. */
export const min: Reducer<number> = { name: 'min', apply: (a, b) => Math.min(a, b) };

/**
 * Set union of strings and numbers, kept sorted so the result does not depend on arrival order:
 * numbers first, ascending (NaN last), then strings by UTF-16 code unit. Duplicates are dropped as
 * in a `Set`, and -0 is stored as 0.
 * Laws: commutative and associative on any arrays of strings and numbers; idempotent on the
 * sorted, duplicate-free arrays it returns (an unsorted initial value is sorted by the first merge).
 *
 * @example
 * graph('g', { state: z.object({ tags: z.array(z.string()) }), reducers: { tags: union } });
 */
export const union: Reducer<any[]> = {
  name: 'union',
  apply: (current, update) =>
    [...new Set([...(current ?? []), ...update].map(positiveZero))].sort(compareUnionItems),
  remove: (current, items) => withoutEqual(current, items),
};

// Every item of the list deep-equal to one of `items` goes; the rest keep their order.
function withoutEqual(current: readonly unknown[] | undefined, items: readonly unknown[]): any[] {
  const list = current ?? [];
  const gone = items.map((item) => JSON.stringify(item));
  const out = list.filter((item) => !gone.includes(JSON.stringify(item)));
  return out.length === list.length ? (list as any[]) : out;
}

// 0 and -0 are one Set member and the Set keeps whichever came first, so without this the result
// would depend on the merge order (JSON turns -0 into 0 on the first save anyway).
function positiveZero(item: unknown): unknown {
  return item === 0 ? 0 : item;
}

// `<` alone is not a total order: 1 < 'a' and 'a' < 1 are both false, as is every comparison with
// NaN, so mixed arrays came out in arrival order. Ordering by type first ('number' < 'string'),
// with NaN after every number, makes the sorted result the same for any order of arrival.
function compareUnionItems(a: any, b: any): number {
  if (typeof a !== typeof b) return typeof a < typeof b ? -1 : 1;
  const aNaN = Number.isNaN(a);
  const bNaN = Number.isNaN(b);
  if (aNaN || bNaN) return Number(aNaN) - Number(bNaN);
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Merges arrays of records by a key field: an update item replaces the current item with the
 * same key in place, new keys are appended in update order; of several items with one key in
 * the same array, the last wins.
 * Laws: associative; idempotent on arrays whose keys are unique, which every array it returns
 * is (merging an array with duplicate keys into itself collapses them); not commutative (the
 * later item wins on a key clash, and new keys are appended in merge order).
 *
 * @example
 * graph('g', { state, reducers: { findings: mergeByKey('id') } });
 */
export function mergeByKey<K extends string>(key: K): Reducer<any[]> {
  return {
    name: `mergeByKey(${key})`,
    apply: (current, update) => {
      const byKey = new Map<unknown, unknown>((current ?? []).map((item) => [item[key], item]));
      for (const item of update) byKey.set(item[key], item);
      return [...byKey.values()];
    },
    // `remove('m1')` names items by their key, as LangGraph.js's RemoveMessage names an id.
    remove: (current, keys) => {
      const list = current ?? [];
      const out = list.filter((item) => !keys.includes(item[key]));
      return out.length === list.length ? list : out;
    },
  };
}
