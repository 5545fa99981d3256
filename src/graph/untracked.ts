import { z } from 'zod';
import type { Diagnostic } from './diagnostic.js';

type State = Readonly<Record<string, unknown>>;

/**
 * A graph's untracked fields (LangGraph.js: `UntrackedValue`), resolved once at compile: state
 * fields that live in memory for one drive of a run and are never written to its store. Every
 * writer of the store (snapshots, events, task rows, inbox items, memos) leaves them out, and
 * every load from the store starts them from `defaults()`. A compiled graph without any has
 * none of this (`graph.untracked` is undefined), so its steps pay one check of that.
 *
 * @example
 * const untracked = graph.untracked; // { fields: Set { 'connection' }, defaults: () => ({ connection: null }) }
 */
export interface Untracked {
  readonly fields: ReadonlySet<string>;
  /** Each untracked field's default, as its schema gives it for a missing value; fresh each call. */
  readonly defaults: () => Record<string, unknown>;
}

/**
 * The untracked fields of a compiled graph, or undefined when it declares none.
 *
 * @example
 * const untracked = untrackedOf(['connection'], State.shape);
 */
export function untrackedOf(
  list: readonly string[] | undefined,
  shape: Readonly<Record<string, z.ZodType>>,
): Untracked | undefined {
  if (list === undefined || list.length === 0) return undefined;
  const fields = new Set(list);
  const schemas = [...fields].map((field) => [field, shape[field]!] as const);
  return {
    fields,
    defaults: () => {
      const out: Record<string, unknown> = {};
      for (const [field, schema] of schemas) out[field] = schema.parse(undefined);
      return out;
    },
  };
}

/**
 * `record` without its untracked fields: the same object when it has none of them, so what is
 * stored of a step that does not touch them is built as before.
 *
 * @example
 * withoutUntracked(graph.untracked, { connection: pool, rows: 3 }); // { rows: 3 }
 */
export function withoutUntracked<T>(untracked: Untracked, record: T): T {
  if (typeof record !== 'object' || record === null) return record;
  let out: Record<string, unknown> | undefined;
  for (const field of untracked.fields) {
    if (!Object.hasOwn(record, field)) continue;
    out ??= { ...(record as Record<string, unknown>) };
    delete out[field];
  }
  return (out ?? record) as T;
}

/**
 * `state` with every untracked field at its default: what a load from the store, a worker's
 * step, and the decisions a replay takes again (routers, prompts, scores, mappings) see.
 *
 * @example
 * untrackedReset(graph.untracked, state); // { ...state, connection: null }
 */
export function untrackedReset(untracked: Untracked, state: State): State {
  return Object.freeze({ ...state, ...untracked.defaults() });
}

/**
 * `found` with what the plain-data validator cannot check, since it does not see the state
 * schema: an untracked field must start from nothing after a resume, so its schema must accept a
 * missing value (a `.default()`, `.optional()`, `.nullish()`); `UNTRACKED_INVALID` if not.
 */
export function withUntrackedDefaults(
  found: Diagnostic[],
  options: { readonly untracked?: readonly string[]; readonly state: z.ZodObject },
): Diagnostic[] {
  const list = options.untracked;
  if (!Array.isArray(list)) return found;
  const shape = options.state.shape as Record<string, z.ZodType>;
  for (const field of new Set(list)) {
    const schema = shape[field];
    // Checked as a key of an object, as the state has it: zod refuses a missing key of z.any().
    if (schema === undefined || z.object({ [field]: schema }).safeParse({}).success) continue;
    found.push({
      code: 'UNTRACKED_INVALID',
      severity: 'error',
      message: `untracked field "${field}" has no default: after a resume it would have no value its schema accepts`,
      hint: `give "${field}" a default in the state schema (.default(...), .optional(), .nullable().default(null))`,
    });
  }
  return found;
}
