import type { Reducer } from './reducers.js';

// Markers a node puts in its update where a value would go, to do what a reducer cannot be asked
// to do with a value: replace a reduced field whole (LangGraph.js: `Overwrite`), take items out
// of a list (`RemoveMessage`), or empty it (`REMOVE_ALL_MESSAGES`). They are plain data, so the
// completion event records them as the node returned them and a replay applies the same.

/** The key a marker carries. State values never hold it: names starting with '@' are waymark's. */
const tag = '@waymark';
/**
 * What only the three functions below put on a marker (not enumerable, so JSON drops it): a
 * node's update is taken as a marker only when its code made one, never because a value that
 * came from outside (a model's output, a tool's reply) has the same shape.
 */
const made = Symbol('waymark update marker');

function mark<T>(marker: UpdateMarker): T {
  Object.defineProperty(marker, made, { value: true });
  return marker as unknown as T;
}

/** A marker as an update holds it, and as the run's history records it. */
export type UpdateMarker =
  | { readonly [tag]: 'overwrite'; readonly value: unknown }
  | { readonly [tag]: 'remove'; readonly items: readonly unknown[] }
  | { readonly [tag]: 'clear' };

/**
 * Sets a field to `value` whatever its reducer (LangGraph.js: `Overwrite`): the reducer is not
 * called for this update, and the value is checked by the field's schema like any other.
 *
 * @example
 * .node('compact', (s) => ({ messages: overwrite([summaryOf(s.messages)]) }))
 */
export function overwrite<T>(value: T): T {
  return mark({ [tag]: 'overwrite', value });
}

/**
 * Takes items out of a list field whose reducer removes (LangGraph.js: `RemoveMessage`): for
 * `mergeByKey(key)` the items are keys (`remove('m1', 'm2')`); for `append` and `union` they are
 * values, and every item equal to one of them as JSON goes. A field whose reducer does not
 * remove refuses it with `UPDATE_INVALID`.
 *
 * @example
 * .node('forget', () => ({ messages: remove('m1') }))   // messages: mergeByKey('id')
 */
export function remove(...items: readonly unknown[]): never[] {
  return mark({ [tag]: 'remove', items });
}

/**
 * Empties a list field, whatever its reducer (LangGraph.js: `REMOVE_ALL_MESSAGES`). The same as
 * `overwrite([])`, named for what it does; a field whose schema refuses `[]` refuses it.
 *
 * @example
 * .node('reset', () => ({ notes: clear() }))
 */
export function clear(): never[] {
  return mark({ [tag]: 'clear' });
}

/** The marker `value` is, or undefined for an ordinary value. */
export function markerOf(value: unknown): UpdateMarker | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const kind = (value as Record<string, unknown>)[tag];
  if (kind === undefined) return undefined;
  const marker = value as Record<string, unknown>;
  const keys = Object.keys(marker).length;
  if (kind === 'clear' && keys === 1) return marker as UpdateMarker;
  if (kind === 'overwrite' && keys === 2 && 'value' in marker) return marker as UpdateMarker;
  if (kind === 'remove' && keys === 2 && Array.isArray(marker.items)) return marker as UpdateMarker;
  return undefined;
}

/** Whether `value` has a marker's shape without having been made by `overwrite`, `remove` or `clear`. */
export function forgedMarker(value: unknown): boolean {
  return markerOf(value) !== undefined && (value as { [made]?: true })[made] !== true;
}

/** The marker with its overwrite value replaced by `value` (as the field's schema parsed it). */
export function withValue(marker: UpdateMarker, value: unknown): UpdateMarker {
  return marker[tag] === 'overwrite' ? { [tag]: 'overwrite', value } : marker;
}

/** What a marker is called in messages: the function that made it. */
export function markerName(marker: UpdateMarker): string {
  return `${marker[tag]}()`;
}

/** The value an `overwrite()` or `clear()` sets, parsed; `remove()` sets none. */
export function markerValue(marker: UpdateMarker): { readonly value: unknown } | undefined {
  if (marker[tag] === 'overwrite') return { value: marker.value };
  if (marker[tag] === 'clear') return { value: [] };
  return undefined;
}

/**
 * Merges one field's update into its current value: through the reducer, or as a marker says.
 * The one place every merge (a node's update, a join, a subgraph's slot, a patch) goes through.
 * @throws Error when a `remove()` reaches a reducer that does not remove (a caller turns it into
 *   `REDUCER_FAILED`, as for a reducer that throws).
 *
 * @example
 * reduce(append, ['a', 'b'], remove('a')); // ['b']
 */
export function reduce(reducer: Reducer | undefined, current: unknown, update: unknown): unknown {
  const marker = markerOf(update);
  if (marker === undefined) return reducer === undefined ? update : reducer.apply(current, update);
  if (marker[tag] === 'overwrite') return marker.value;
  if (marker[tag] === 'clear') return [];
  if (reducer?.remove === undefined)
    throw new Error(
      `remove() needs a reducer that removes (append, union or mergeByKey); ${reducer === undefined ? 'the field has none' : `"${reducer.name}" does not`}`,
    );
  return reducer.remove(current, marker.items);
}
