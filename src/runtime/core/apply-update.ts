import type { ErrorCode } from '../../error/codes.js';
import { type ErrorValue, errorValue, provenance } from '../../error/error-value.js';
import type { CompiledGraph, RuntimeNode } from '../../graph/compiled.js';
import { slotSchema } from '../../graph/subgraph.js';
import {
  forgedMarker,
  markerName,
  markerOf,
  markerValue,
  reduce,
  withValue,
} from '../../graph/update-markers.js';
import { callUser, messageOf } from './call-user.js';
import { deepFreeze } from './freeze.js';
import { scopedUpdate } from './scope.js';

type State = Readonly<Record<string, unknown>>;

/** Why an update, or its merge, was refused; the state is then unchanged. */
export interface UpdateRefusal {
  readonly ok: false;
  readonly code: ErrorCode;
  readonly message: string;
  readonly details?: unknown;
  /** What user code threw, when a refinement or a reducer threw. */
  readonly thrown?: unknown;
}

/** An update as parsed: the fields it sets, each parsed by its schema and frozen. */
export type Parsed = { readonly ok: true; readonly fields: State | undefined } | UpdateRefusal;

/** The state after merging fields through the reducers. */
export type Merged = { readonly ok: true; readonly state: State } | UpdateRefusal;

/**
 * Parses what a node returned into the fields it sets: each field's schema applies its
 * defaults, coercions and transforms, and the node's `writes` are enforced. This happens once,
 * where the node ran, before its completion becomes an event: the event records the parsed
 * fields, so a replay applies exactly what the live run applied and parses nothing again.
 * Only the fields in the update are parsed and frozen: the cost follows the update's size.
 * A node of a subgraph is parsed by its child's schemas and its fields wrapped for its slot.
 *
 * @example
 * const parsed = parseUpdate(graph, node, { count: '3' }); // { ok: true, fields: { count: 3 } }
 */
export function parseUpdate(graph: CompiledGraph, node: RuntimeNode, update: unknown): Parsed {
  if (update === undefined || update === null) return { ok: true, fields: undefined };
  if (typeof update !== 'object' || Array.isArray(update)) {
    return refuse(
      'UPDATE_INVALID',
      `node "${node.def.name}" returned ${describe(update)}; an update is an object of state fields`,
    );
  }
  const keys = Object.keys(update);
  if (keys.length === 0) return { ok: true, fields: undefined };
  const fields: Record<string, unknown> = {};
  const schemas = node.scope?.fieldSchemas ?? graph.fieldSchemas;
  for (const key of keys) {
    const schema = schemas.get(key);
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
    const value = (update as Record<string, unknown>)[key];
    // A slot's schema takes anything as it is: skipping it spares each subgraph entry's and
    // exit's update a round through zod.
    if (schema === slotSchema) {
      fields[key] = deepFreeze(value);
      continue;
    }
    // overwrite() and clear() set a value, which the schema checks as any other; remove() sets
    // none, and is taken only by a field whose reducer removes.
    const marker = markerOf(value);
    if (marker !== undefined && forgedMarker(value))
      return refuse(
        'UPDATE_INVALID',
        `node "${node.def.name}" wrote "${key}" as an object shaped like a waymark marker; only overwrite(), remove() and clear() make one`,
        { field: key },
      );
    const set = marker === undefined ? { value } : markerValue(marker);
    if (set === undefined) {
      const reducer = node.scope === undefined ? graph.reducers.get(key) : undefined;
      if (node.scope === undefined && reducer?.remove === undefined)
        return refuse(
          'UPDATE_INVALID',
          `node "${node.def.name}" wrote remove() to "${key}", whose ${reducer === undefined ? 'value has no reducer' : `reducer "${reducer.name}" does not remove`}; remove() needs append, union or mergeByKey (overwrite() sets any field)`,
          { field: key },
        );
      fields[key] = deepFreeze(marker);
      continue;
    }
    // A refinement or a transform is user code: it may throw instead of reporting an issue.
    const called = callUser(() => schema.safeParse(set.value));
    if (!called.ok) {
      return refuse(
        'UPDATE_INVALID',
        `node "${node.def.name}" wrote "${key}", and its schema threw: ${messageOf(called.thrown)}`,
        { field: key },
        called.thrown,
      );
    }
    const parsed = called.value;
    if (!parsed.success) {
      const issues = parsed.error.issues.map((i) => ({
        path: [key, ...i.path.map(String)],
        message: i.message,
      }));
      const written = marker === undefined ? '' : ` with ${markerName(marker)}`;
      return refuse(
        'UPDATE_INVALID',
        `node "${node.def.name}" wrote an invalid "${key}"${written}: ${issues[0]?.message ?? 'invalid'}`,
        { field: key, issues },
      );
    }
    fields[key] = deepFreeze(marker === undefined ? parsed.data : withValue(marker, parsed.data));
  }
  Object.freeze(fields);
  return { ok: true, fields: node.scope === undefined ? fields : scopedUpdate(node, fields) };
}

/**
 * Merges parsed fields into a state through the field reducers; a reducer that throws refuses
 * the merge with `REDUCER_FAILED` instead of throwing out of the transition.
 *
 * @example
 * const merged = mergeFields(graph, state, { log: ['plan'] });
 */
export function mergeFields(graph: CompiledGraph, state: State, fields: State): Merged {
  const next: Record<string, unknown> = { ...state };
  for (const key in fields) {
    const value = fields[key];
    const reducer = graph.reducers.get(key);
    if (reducer === undefined && markerOf(value) === undefined) {
      next[key] = value;
      continue;
    }
    const called = callUser(() => reduce(reducer, state[key], value));
    if (!called.ok) return reducerFailed(key, called.thrown);
    next[key] = deepFreeze(called.value);
  }
  return { ok: true, state: Object.freeze(next) };
}

/**
 * Folds many parsed updates into a state in order, freezing each touched field once at the end:
 * a join merging n branches into an append field walks the list once, not n times.
 */
export function mergeAll(graph: CompiledGraph, state: State, updates: readonly State[]): Merged {
  if (updates.length === 0) return { ok: true, state };
  const next: Record<string, unknown> = { ...state };
  const touched = new Set<string>();
  const from = lastReplacing(graph, updates);
  for (let i = 0; i < updates.length; i++) {
    const fields = updates[i]!;
    for (const key in fields) {
      // An update before one that replaces the field whatever it holds cannot change the result.
      if (from !== undefined && i < (from.get(key) ?? -1)) continue;
      const reducer = graph.reducers.get(key);
      const value = fields[key];
      if (reducer === undefined && markerOf(value) === undefined) next[key] = value;
      else {
        const current = next[key];
        const called = callUser(() => reduce(reducer, current, value));
        if (!called.ok) return reducerFailed(key, called.thrown);
        next[key] = called.value;
      }
      touched.add(key);
    }
  }
  for (const key of touched) deepFreeze(next[key]);
  return { ok: true, state: Object.freeze(next) };
}

/**
 * For fields whose reducer says which updates replace the value (a subgraph's slot), the index
 * of the last such update of each; undefined when the graph has no such reducer.
 */
function lastReplacing(
  graph: CompiledGraph,
  updates: readonly State[],
): Map<string, number> | undefined {
  let replacing = replacingKeys.get(graph);
  if (replacing === undefined) {
    replacing = [...graph.reducers].filter(([, r]) => r.replaces !== undefined).map(([k]) => k);
    replacingKeys.set(graph, replacing);
  }
  if (replacing.length === 0) return undefined;
  const last = new Map<string, number>();
  for (const key of replacing) {
    const reducer = graph.reducers.get(key)!;
    for (let i = updates.length - 1; i >= 0; i--) {
      const value = updates[i]![key];
      // User code: one that throws says nothing, and nothing is skipped.
      if (value === undefined) continue;
      const replaced = callUser(() => reducer.replaces!(value));
      if (replaced.ok && replaced.value === true) {
        last.set(key, i);
        break;
      }
    }
  }
  return last;
}

const replacingKeys = new WeakMap<CompiledGraph, readonly string[]>();

/**
 * The error value of a refused update or merge, at the activation it belongs to; permanent:
 * the same update fails the same way again.
 */
export function refusalError(
  where: { readonly node: string; readonly activation: string; readonly attempt: number },
  refusal: UpdateRefusal,
): ErrorValue {
  const value = errorValue(where, refusal.code, 'permanent', refusal.message, refusal.details);
  return refusal.thrown === undefined ? value : { ...value, ...provenance(refusal.thrown) };
}

function reducerFailed(field: string, thrown: unknown): UpdateRefusal {
  return refuse(
    'REDUCER_FAILED',
    `the reducer of "${field}" threw: ${messageOf(thrown)}`,
    { field },
    thrown,
  );
}

function refuse(
  code: ErrorCode,
  message: string,
  details?: unknown,
  thrown?: unknown,
): UpdateRefusal {
  return {
    ok: false,
    code,
    message,
    ...(details !== undefined && { details }),
    ...(thrown !== undefined && { thrown }),
  };
}

function describe(value: unknown): string {
  return Array.isArray(value) ? 'an array' : `a ${typeof value}`;
}
