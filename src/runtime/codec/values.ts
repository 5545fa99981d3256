import type { CompiledGraph } from '../../graph/compiled.js';

// State values as stored. JSON cannot hold a Date, a BigInt, a Map or a Set: `JSON.stringify`
// turns a Date into a string and a Map into `{}`, so a run resumed from its history would read
// other values than the run that wrote it (a Date field read back as a string, and a node
// reading it after a resume seeing another type than an uninterrupted run). A graph whose state
// schema can hold such values stores them tagged, `{"$wm":"date","v":"2026-12-01T00:00:00.000Z"}`,
// and reads them back as the same values. Graphs whose state is plain JSON, nearly all of them,
// pay nothing: their events are plain `JSON.stringify`, which a durable step counts on.

const tag = '$wm';
const tagged = new WeakMap<CompiledGraph, boolean>();

/**
 * Whether a graph's state can hold values JSON cannot (a `z.date()` anywhere in a field's
 * schema, `z.coerce.date()`, `z.bigint()`, `z.map()`, `z.set()`, a transform or a custom type,
 * whose output is anything): its stored values are then tagged. Worked out once per graph.
 */
export function needsTags(graph: CompiledGraph): boolean {
  let needs = tagged.get(graph);
  if (needs === undefined) {
    // A subgraph's state lives in a private field of the run's: its fields count too.
    const scopes = new Set([...graph.nodes.values()].flatMap((n) => (n.scope ? [n.scope] : [])));
    needs = [graph.fieldSchemas, ...[...scopes].map((scope) => scope.fieldSchemas)].some(
      (schemas) => [...schemas.values()].some((schema) => holdsNonJson(schema, new Set())),
    );
    tagged.set(graph, needs);
  }
  return needs;
}

/** JSON of a value of this graph's state, tagged where JSON alone would change it. */
export function stringify(value: unknown, graph: CompiledGraph): string {
  return needsTags(graph) ? JSON.stringify(value, replacer) : JSON.stringify(value);
}

/** Reads what {@link stringify} wrote; a text without tags is read by plain `JSON.parse`. */
export function parse(text: string): unknown {
  return text.includes(`"${tag}"`) ? JSON.parse(text, reviver) : JSON.parse(text);
}

interface ZodLike {
  readonly _zod?: { readonly def: Record<string, unknown> & { readonly type: string } };
}

const nonJson = new Set([
  'date',
  'bigint',
  'map',
  'set',
  'custom',
  'transform',
  'symbol',
  'function',
  'promise',
]);

function holdsNonJson(schema: unknown, seen: Set<unknown>): boolean {
  const def = (schema as ZodLike)?._zod?.def;
  if (def === undefined || seen.has(schema)) return false;
  seen.add(schema);
  if (nonJson.has(def.type)) return true;
  const inner = (value: unknown) => holdsNonJson(value, seen);
  switch (def.type) {
    case 'object':
      return Object.values(def.shape as Record<string, unknown>).some(inner);
    case 'array':
      return inner(def.element);
    case 'tuple':
      return (def.items as unknown[]).some(inner) || (def.rest !== null && inner(def.rest));
    case 'record':
      return inner(def.valueType);
    case 'union':
      return (def.options as unknown[]).some(inner);
    case 'intersection':
      return inner(def.left) || inner(def.right);
    case 'pipe':
      return inner(def.in) || inner(def.out);
    case 'lazy':
      return inner((def.getter as () => unknown)());
    default:
      // optional, nullable, default, prefault, catch, readonly, nonoptional: their inner type.
      return def.innerType !== undefined && inner(def.innerType);
  }
}

// `this[key]` is the value before its own toJSON ran: a Date is still a Date here.
function replacer(this: Record<string, unknown>, key: string, value: unknown): unknown {
  const raw = this[key];
  if (raw instanceof Date)
    return { [tag]: 'date', v: Number.isNaN(raw.getTime()) ? null : raw.toISOString() };
  if (typeof raw === 'bigint') return { [tag]: 'bigint', v: raw.toString() };
  if (raw instanceof Map) return { [tag]: 'map', v: [...raw] };
  if (raw instanceof Set) return { [tag]: 'set', v: [...raw] };
  // An object of the state's own that happens to have a "$wm" key is stored as its entries, so
  // it is never mistaken for a tag.
  if (
    typeof value === 'object' &&
    value !== null &&
    !Array.isArray(value) &&
    Object.hasOwn(value, tag)
  )
    return { [tag]: 'object', v: Object.entries(value) };
  return value;
}

function reviver(_key: string, value: unknown): unknown {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return value;
  const kind = (value as Record<string, unknown>)[tag];
  if (typeof kind !== 'string') return value;
  const v = (value as { v: unknown }).v;
  switch (kind) {
    case 'date':
      return new Date(v === null ? Number.NaN : (v as string));
    case 'bigint':
      return BigInt(v as string);
    case 'map':
      return new Map(v as [unknown, unknown][]);
    case 'set':
      return new Set(v as unknown[]);
    case 'object':
      return Object.fromEntries(v as [string, unknown][]);
    default:
      return value;
  }
}
