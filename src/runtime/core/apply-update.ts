import type { ErrorCode } from '../../error/codes.js';
import type { CompiledGraph, RuntimeNode } from '../../graph/compiled.js';
import { deepFreeze } from './freeze.js';

type State = Readonly<Record<string, unknown>>;

/**
 * The new state and the update as parsed (what a join merges later), or why the update was
 * refused (the state is then unchanged).
 */
export type UpdateResult =
  | { readonly ok: true; readonly state: State; readonly fields: State | undefined }
  | {
      readonly ok: false;
      readonly code: ErrorCode;
      readonly message: string;
      readonly details?: unknown;
    };

/**
 * Applies a node's update through the field reducers. Only the fields in the update are parsed,
 * reduced and frozen: the cost follows the update's size, not the state's.
 */
export function applyUpdate(
  graph: CompiledGraph,
  node: RuntimeNode,
  state: State,
  update: unknown,
): UpdateResult {
  if (update === undefined || update === null) return { ok: true, state, fields: undefined };
  if (typeof update !== 'object' || Array.isArray(update)) {
    return refuse(
      'UPDATE_INVALID',
      `node "${node.def.name}" returned ${describe(update)}; an update is an object of state fields`,
    );
  }
  const keys = Object.keys(update);
  if (keys.length === 0) return { ok: true, state, fields: undefined };
  const fields: Record<string, unknown> = {};
  for (const key of keys) {
    const schema = graph.fieldSchemas.get(key);
    if (schema === undefined) {
      return refuse(
        'UPDATE_INVALID',
        `node "${node.def.name}" wrote "${key}", which is not a state field`,
        { field: key },
      );
    }
    if (node.writes !== undefined && !node.writes.has(key)) {
      return refuse(
        'WRITE_DENIED',
        `node "${node.def.name}" wrote "${key}" but declares writes [${[...node.writes].join(', ')}]`,
        { field: key },
      );
    }
    const parsed = schema.safeParse((update as Record<string, unknown>)[key]);
    if (!parsed.success) {
      const issues = parsed.error.issues.map((i) => ({
        path: [key, ...i.path.map(String)],
        message: i.message,
      }));
      return refuse(
        'UPDATE_INVALID',
        `node "${node.def.name}" wrote an invalid "${key}": ${issues[0]?.message ?? 'invalid'}`,
        { field: key, issues },
      );
    }
    fields[key] = deepFreeze(parsed.data);
  }
  const frozen = Object.freeze(fields);
  return { ok: true, state: mergeFields(graph, state, frozen), fields: frozen };
}

/**
 * Merges already-parsed fields into a state through the field reducers. A join uses it to fold
 * each winning branch's updates into the state, in branch order.
 */
export function mergeFields(graph: CompiledGraph, state: State, fields: State): State {
  const next: Record<string, unknown> = { ...state };
  for (const key in fields) {
    const reducer = graph.reducers.get(key);
    next[key] =
      reducer === undefined ? fields[key] : deepFreeze(reducer.apply(state[key], fields[key]));
  }
  return Object.freeze(next);
}

/**
 * Folds many parsed updates into a state in order, freezing each touched field once at the end:
 * a join merging n branches into an append field walks the list once, not n times.
 */
export function mergeAll(graph: CompiledGraph, state: State, updates: readonly State[]): State {
  if (updates.length === 0) return state;
  const next: Record<string, unknown> = { ...state };
  const touched = new Set<string>();
  for (const fields of updates) {
    for (const key in fields) {
      const reducer = graph.reducers.get(key);
      next[key] = reducer === undefined ? fields[key] : reducer.apply(next[key], fields[key]);
      touched.add(key);
    }
  }
  for (const key of touched) deepFreeze(next[key]);
  return Object.freeze(next);
}

function refuse(code: ErrorCode, message: string, details?: unknown): UpdateResult {
  return details === undefined
    ? { ok: false, code, message }
    : { ok: false, code, message, details };
}

function describe(value: unknown): string {
  return Array.isArray(value) ? 'an array' : `a ${typeof value}`;
}
