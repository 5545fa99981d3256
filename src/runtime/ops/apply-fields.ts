import { WaymarkError } from '../../error/waymark-error.js';
import type { CompiledGraph } from '../../graph/compiled.js';
import { markerOf, markerValue, withValue } from '../../graph/update-markers.js';
import { mergeFields } from '../core/apply-update.js';
import { callUser } from '../core/call-user.js';
import { deepFreeze } from '../core/freeze.js';
import type { Snapshot } from '../core/snapshot.js';

/**
 * A state with fields set from outside a node (a rewind's note, a thread's next input): each
 * checked by its field's schema, then merged through the field reducers, as a node's update is.
 * @throws WaymarkError `OPTIONS_INVALID` (`what` names the caller's option) for a field that is
 *   not one of the state's, a value its schema refuses, or a reducer that throws.
 *
 * @example
 * const next = applyFields(graph, state, { messages: [question] }, "the thread's input");
 */
export function applyFields(
  graph: CompiledGraph,
  state: Snapshot['state'],
  update: Readonly<Record<string, unknown>> | undefined,
  what: string,
): Snapshot['state'] {
  if (update === undefined) return state;
  const merged = mergeFields(graph, state, parseFields(graph, update, what));
  if (!merged.ok) throw invalid(`${what} could not be applied: ${merged.message}`);
  return merged.state;
}

/**
 * Fields set from outside a node, each as its schema parses it (defaults filled, frozen).
 * @throws WaymarkError `OPTIONS_INVALID` as {@link applyFields} does.
 */
export function parseFields(
  graph: CompiledGraph,
  update: Readonly<Record<string, unknown>>,
  what: string,
): Readonly<Record<string, unknown>> {
  if (typeof update !== 'object' || update === null || Array.isArray(update))
    throw invalid(`${what} must be an object of state fields`);
  const fields: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(update)) {
    const schema = graph.fieldSchemas.get(field);
    // A patch may overwrite(), clear() or remove() as a node's update may.
    const marker = markerOf(value);
    const set = marker === undefined ? { value } : markerValue(marker);
    if (set === undefined && schema !== undefined) {
      if (graph.reducers.get(field)?.remove === undefined)
        throw invalid(
          `${what}'s "${field}" is remove(), and its reducer does not remove (append, union or mergeByKey do)`,
        );
      fields[field] = deepFreeze(marker);
      continue;
    }
    const parsed =
      schema === undefined || set === undefined
        ? undefined
        : callUser(() => schema.safeParse(set.value));
    if (parsed === undefined || !parsed.ok || !parsed.value.success) {
      throw invalid(`${what}'s "${field}" is not a valid value of a state field`);
    }
    const data = parsed.value.data;
    fields[field] = deepFreeze(marker === undefined ? data : withValue(marker, data));
  }
  return Object.freeze(fields);
}

function invalid(message: string): WaymarkError {
  return new WaymarkError('OPTIONS_INVALID', message, { retryable: false });
}
