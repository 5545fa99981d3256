import type { RuntimeNode } from '../../graph/compiled.js';
import type { Scheduling } from './draft.js';
import type { Activation, BranchRef } from './snapshot.js';

type State = Readonly<Record<string, unknown>>;
const empty: State = Object.freeze({});

/**
 * The state a node of a subgraph sees: its child's state, found under the private slots of its
 * scope (`state['@review']`); the state itself for a node of the graph run.
 *
 * @example
 * scopedState(node, state); // state['@review'] for node "review/plan"
 */
export function scopedState(node: RuntimeNode | undefined, state: State): State {
  const path = node?.scope?.path;
  if (path === undefined) return state;
  let scoped = state;
  for (const slot of path) scoped = (scoped[slot] as State | null | undefined) ?? empty;
  return scoped;
}

/**
 * A subgraph node's parsed fields as an update of the run's state: wrapped in one `{ merge }` per
 * slot of its scope, which the slots' reducers unwrap through the child's own reducers.
 *
 * @example
 * scopedUpdate(node, { plan: 'x' }); // { '@review': { merge: { plan: 'x' } } }
 */
export function scopedUpdate(node: RuntimeNode, fields: State): State {
  const path = node.scope?.path;
  if (path === undefined) return fields;
  let update = fields;
  for (let i = path.length - 1; i >= 0; i--) {
    // Set, not a computed key in a literal: that is a slow path in V8, taken on every child step.
    const wrapped: Record<string, unknown> = {};
    wrapped[path[i]!] = Object.freeze({ merge: update });
    update = Object.freeze(wrapped);
  }
  return update;
}

const unscheduled: Scheduling = {};

/**
 * How a successor is scheduled: in the same branch and scope; one object for the common none.
 *
 * @example
 * t.enqueue(next, activation.id, scheduling(activation.branch, activation.scope));
 */
export function scheduling(
  branch: BranchRef | undefined,
  scope: readonly string[] | undefined,
): Scheduling {
  if (branch === undefined) return scope === undefined ? unscheduled : { scope };
  return scope === undefined ? { branch } : { branch, scope };
}

/**
 * The scope what follows `activation` runs in: its own, or, after a subgraph's exit, the one
 * enclosing it (an exit's successors, and its onError route, belong to the parent graph).
 *
 * @example
 * outerScope(exitNode, { ...activation, scope: ['mid:1', 'mid/inner:1'] }); // ['mid:1']
 */
export function outerScope(
  node: RuntimeNode,
  activation: Activation,
): readonly string[] | undefined {
  const scope = activation.scope;
  if (node.inline?.scope !== 'leave' || scope === undefined) return scope;
  return scope.length > 1 ? scope.slice(0, -1) : undefined;
}

/**
 * A branch's updates with `fields` appended. At the exit of a subgraph of the branch's own graph,
 * the child's updates before it (those that touch only its slot) are dropped: the exit empties
 * the slot, so a join, or a checkpoint's reload, merging them would only make what the exit
 * replaces. A branch that ran a child then merges like one that ran a node.
 *
 * @example
 * branchUpdates(exitNode, [{ '@review': { set: child } }], { out: [1], '@review': { set: null } });
 * // [{ out: [1], '@review': { set: null } }]
 */
export function branchUpdates(
  node: RuntimeNode,
  updates: readonly State[],
  fields: State,
): State[] {
  const inline = node.inline;
  if (inline?.scope !== 'leave' || node.scope !== undefined) return [...updates, fields];
  const kept: State[] = [];
  for (const update of updates) if (!onlyTouches(update, inline.slot)) kept.push(update);
  kept.push(fields);
  return kept;
}

function onlyTouches(update: State, field: string): boolean {
  for (const key in update) if (key !== field) return false;
  return true;
}
