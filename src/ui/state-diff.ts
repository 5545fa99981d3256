/** One difference between two states: at a path of keys, what it was and what it became. */
export interface Change {
  readonly path: string;
  readonly kind: 'added' | 'removed' | 'changed';
  readonly before?: unknown;
  readonly after?: unknown;
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The differences between the state before a step and after it, field by field, into nested
 * objects; a list that only grew reads as its new items (an append reducer's step).
 *
 * @example
 * diffStates({ n: 1, log: ['a'] }, { n: 2, log: ['a', 'b'] });
 * // [{ path: 'n', kind: 'changed', before: 1, after: 2 }, { path: 'log[1]', kind: 'added', after: 'b' }]
 */
export function diffStates(before: unknown, after: unknown, path = ''): Change[] {
  if (Object.is(before, after)) return [];
  if (isObject(before) && isObject(after)) {
    const out: Change[] = [];
    for (const key of new Set([...Object.keys(before), ...Object.keys(after)])) {
      const at = path === '' ? key : `${path}.${key}`;
      if (!(key in after)) out.push({ path: at, kind: 'removed', before: before[key] });
      else if (!(key in before)) out.push({ path: at, kind: 'added', after: after[key] });
      else out.push(...diffStates(before[key], after[key], at));
    }
    return out;
  }
  if (Array.isArray(before) && Array.isArray(after) && after.length >= before.length) {
    const same = before.every((v, i) => JSON.stringify(v) === JSON.stringify(after[i]));
    if (same)
      return after
        .slice(before.length)
        .map((v, i) => ({ path: `${path}[${before.length + i}]`, kind: 'added', after: v }));
  }
  if (JSON.stringify(before) === JSON.stringify(after)) return [];
  return [{ path: path || '(state)', kind: 'changed', before, after }];
}
