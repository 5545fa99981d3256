import { z } from 'zod';
import type { CompiledGraph, Inline } from './compiled.js';
import type { Reducer } from './reducers.js';
import { outputOf, startState } from './run-input.js';
import type { NodeFn, SubgraphDef } from './types.js';
import { markerOf, reduce } from './update-markers.js';

type Field<S> = keyof S & string;
type State = Readonly<Record<string, unknown>>;

/**
 * Options of `.subgraph()`. `input` makes the child's input from the parent's state: a function,
 * or a record `{ childField: 'parentField' }`; absent, each child input is read from the parent
 * field of the same name. `output` makes the parent's update from the child's output: a
 * function, or a record `{ parentField: 'childField' }`; absent, each child output field is
 * written to the parent field of the same name. Records are data: the validator checks both
 * sides against both schemas. `reads`/`writes` limit the mappings as they limit a node.
 *
 * @example
 * .subgraph('review', reviewGraph, {
 *   input: (s) => ({ draft: s.draft }),
 *   output: { verdict: 'decision' },
 *   reads: ['draft'],
 *   writes: ['verdict'],
 * })
 */
export interface SubgraphOptions<S, CI, CO, W extends Field<S> = Field<S>> {
  readonly input?:
    | ((state: Readonly<S>, branch: MapItem) => CI)
    | { readonly [K in keyof CI & string]?: Field<S> };
  readonly output?:
    | ((output: Readonly<CO>) => Partial<Pick<S, NoInfer<W>>> | undefined)
    | { readonly [K in NoInfer<W>]?: keyof CO & string };
  readonly reads?: readonly Field<S>[];
  readonly writes?: readonly W[];
  /** Most times the subgraph may be entered in one run. */
  readonly visits?: number;
  /** Bump when the mappings change, so recorded outputs are not reused for them. */
  readonly version?: number;
  /** Node to continue at, with the error recorded, when a mapping fails. */
  readonly onError?: string;
}

/**
 * What an input mapping learns besides the state: in a map whose branch is the subgraph, the
 * item the branch is for and its index (undefined elsewhere).
 *
 * @example
 * .subgraph('audit', auditGraph, { input: (_s, { item }) => ({ file: item as string }) })
 */
export interface MapItem {
  readonly item: unknown;
  readonly index: number | undefined;
}

/** A subgraph as the builder keeps it until compile: its data and its mapping functions. */
export interface SubgraphEntry {
  readonly def: SubgraphDef;
  readonly child: CompiledGraph;
  readonly input: ((state: State, branch: MapItem) => unknown) | undefined;
  readonly output: ((output: State) => unknown) | undefined;
}

/** The private field of the enclosing state a subgraph's state lives in while it runs. */
export const slotOf = (name: string) => `@${name}`;

/**
 * A state without its subgraphs' private slots: what a person or a client is shown, read from
 * a store without the graph (a state field may not start with `@`, so every such key is one).
 *
 * @example
 * withoutSlots({ ticket: 't', '@draft': null }); // { ticket: 't' }
 */
export function withoutSlots(
  state: Readonly<Record<string, unknown>>,
): Readonly<Record<string, unknown>> {
  let kept: Record<string, unknown> | undefined;
  for (const key of Object.keys(state)) {
    if (!key.startsWith('@')) continue;
    kept ??= { ...state };
    delete kept[key];
  }
  return kept ?? state;
}

/**
 * The schema of a slot: none to speak of. What a slot receives was made by the step (an entry's
 * child state, parsed as a run's input; an exit's clearing) or parsed by the child's own field
 * schemas where the child's node ran, so the parent's parse passes it through as it is.
 */
export const slotSchema = z.unknown();

/** The node that applies a subgraph's output mapping when its child reaches END. */
export const exitOf = (name: string) => `${name}/__end__`;

/**
 * The name a user declared for a flat node: a subgraph's exit (`draft/__end__`) is the subgraph
 * node `draft`, whose edge, router or fan-out it carries; any other node is its own name.
 *
 * @example
 * declaredName('draft/__end__'); // 'draft'
 */
export function declaredName(name: string): string {
  return name.endsWith(exitSuffix) ? name.slice(0, -exitSuffix.length) : name;
}
const exitSuffix = '/__end__';

/**
 * An activation id as the user declared its node: a subgraph's exit (`draft/__end__:1`) is the
 * subgraph node's (`draft:1`), whose entry its child's first node names as parent already.
 *
 * @example
 * declaredActivation('draft/__end__:1'); // 'draft:1'
 */
export function declaredActivation(id: string): string {
  return id.includes(exitSuffix) ? id.replace(`${exitSuffix}:`, ':') : id;
}

/**
 * A child node's update as the node returned it: the step records it inside its subgraph's
 * slot (`{ '@draft': { merge: { text } } }`, nested once per subgraph), which is no field of
 * the user's.
 *
 * @example
 * ownUpdate({ '@draft': { merge: { text: 'hi' } } }); // { text: 'hi' }
 */
export function ownUpdate(update: unknown): unknown {
  let own = update;
  for (;;) {
    if (typeof own !== 'object' || own === null) return own;
    const keys = Object.keys(own);
    if (keys.length !== 1 || !keys[0]!.startsWith('@')) return own;
    const inner = (own as Record<string, unknown>)[keys[0]!] as { merge?: unknown } | null;
    if (typeof inner !== 'object' || inner === null || !('merge' in inner)) return own;
    own = inner.merge;
  }
}

/** The fields a child is entered with: its `input` schema's, or all of its state. */
export function inputFields(child: CompiledGraph): readonly string[] {
  return child.input === undefined ? child.def.fields : Object.keys(child.input.shape);
}

/** The fields a child hands back: its `output` schema's, or all of its state. */
export function outputFields(child: CompiledGraph): readonly string[] {
  return child.output === undefined ? child.def.fields : Object.keys(child.output.shape);
}

/** The input record a subgraph declared with none: each child input from the same parent field. */
export function sameNames(fields: readonly string[]): Record<string, string> {
  return Object.fromEntries(fields.map((f) => [f, f]));
}

/**
 * The entry's mapping: the child's input made by the input mapping, checked and parsed like a
 * run's input (`INPUT_NOT_ALLOWED`, `INPUT_INVALID`), set as the child's whole state in its slot.
 */
export function entryOf(entry: SubgraphEntry): Inline {
  const { def, child, input } = entry;
  const record = def.input === 'function' ? undefined : def.input;
  const who = `subgraph "${def.name}"`;
  return {
    scope: 'enter',
    slot: def.slot,
    capped: false,
    fn: (state, branch) => {
      const given = input !== undefined ? input(state, branch) : pick(state, record!);
      // Set, not a computed key in a literal: that is a slow path in V8.
      const update: Record<string, unknown> = {};
      update[def.slot] = { set: startState(child, given, who) };
      return update;
    },
  };
}

/**
 * The exit's mapping: the parent's update made from the child's output, and the slot cleared
 * (the child's state is private scratch; what it hands back is in the update).
 */
export function leaveOf(entry: SubgraphEntry): Inline {
  const { def, child, output } = entry;
  const record = def.output === 'function' ? undefined : def.output;
  // The record's `[parentField, childField]` pairs whose child field is one the child hands back.
  const outputs = new Set(outputFields(child));
  const handed = record && Object.entries(record).filter(([, source]) => outputs.has(source));
  let capped = false;
  for (const node of child.nodes.values()) if (node.cap !== Number.POSITIVE_INFINITY) capped = true;
  return {
    scope: 'leave',
    slot: def.slot,
    capped,
    fn: (state) => {
      const childState = (state[def.slot] ?? {}) as State;
      const made: Record<string, unknown> = {};
      if (output === undefined) {
        // A record reads the child's output fields straight from its state: the same fields
        // as picking the output first, without the object in between.
        for (const [target, source] of handed!)
          if (Object.hasOwn(childState, source)) made[target] = childState[source];
      } else {
        const update = output(outputOf(child, childState)) as State | undefined;
        // Copied key by key: adding a key to a spread of an unfrozen object is a slow path in V8.
        for (const key in update) if (Object.hasOwn(update, key)) made[key] = update[key];
      }
      made[def.slot] = cleared;
      return made;
    },
  };
}

// What an exit sets its slot to: one frozen object for every exit.
const cleared = Object.freeze({ set: null });

/** The function a subgraph's entry and exit stand for: the step applies their mapping instead. */
export const mappedInline: NodeFn<unknown, unknown> = () => {
  throw new Error('waymark internal: a subgraph entry or exit is applied by the step, never run');
};

/**
 * The reducer of a slot: `{ set }` replaces the child's state (entry, exit); `{ merge }` merges a
 * child node's fields through the child's own reducers. Pure, so a join merging branches that
 * each ran the child folds their slot updates like any other field's.
 */
export function slotReducer(child: CompiledGraph): Reducer {
  const reducers = child.reducers;
  return {
    name: `subgraph(${child.name})`,
    apply(current: State | null, update: { set?: State | null; merge?: State }) {
      if ('set' in update) return update.set ?? null;
      const next: Record<string, unknown> = { ...current };
      const fields = update.merge ?? {};
      for (const key in fields) {
        const value = fields[key];
        const reducer = reducers.get(key);
        if (reducer === undefined && markerOf(value) === undefined) {
          next[key] = value;
          continue;
        }
        // Frozen here, field by field where a child reducer (or a marker) made a new value, so
        // the merge's deep freeze stops at once instead of walking the child's whole state again.
        const merged = reduce(reducer, next[key], value);
        frozen(merged);
        next[key] = merged;
      }
      return Object.freeze(next);
    },
    replaces: (update: { set?: unknown }) => 'set' in update,
  };
}

// `{ target: source }`: the value of field `source` of `from` under the name `target`.
function pick(from: State, record: Readonly<Record<string, string>>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [target, source] of Object.entries(record))
    if (Object.hasOwn(from, source)) out[target] = from[source];
  return out;
}

// The runtime's deep freeze (graph/ cannot import it): already-frozen parts are skipped.
function frozen(value: unknown): void {
  if (typeof value !== 'object' || value === null || Object.isFrozen(value)) return;
  if (ArrayBuffer.isView(value)) return;
  Object.freeze(value);
  for (const key of Object.keys(value)) frozen((value as Record<string, unknown>)[key]);
}
