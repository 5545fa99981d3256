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
};

/** Adds numbers. Laws: commutative and associative; not idempotent. */
export const sum: Reducer<number> = { name: 'sum', apply: (current, update) => current + update };

/** Keeps the larger number. Laws: commutative, associative, idempotent. */
export const max: Reducer<number> = { name: 'max', apply: (a, b) => Math.max(a, b) };

/** Keeps the smaller number. Laws: commutative, associative, idempotent. */
export const min: Reducer<number> = { name: 'min', apply: (a, b) => Math.min(a, b) };

/**
 * Set union of strings or numbers, kept sorted so the result does not depend on arrival order.
 * Laws: commutative, associative, idempotent.
 */
export const union: Reducer<any[]> = {
  name: 'union',
  apply: (current, update) =>
    [...new Set([...(current ?? []), ...update])].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)),
};

/**
 * Merges arrays of records by a key field: an update item replaces the current item with the
 * same key, new keys are appended in update order.
 * Laws: associative and idempotent; not commutative (the later item wins on a key clash).
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
  };
}
