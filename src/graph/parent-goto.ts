import { END } from './end.js';
import { exitOf, ownUpdate, withoutSlots } from './subgraph.js';

// A child node's way of ending its subgraph and routing the parent (LangGraph.js:
// `new Command({ graph: Command.PARENT, goto, update })`). Like the update markers it is plain
// data with a mark only `parent()` sets, so a value from outside (a model's output) that has its
// shape is never taken for one.

/** The key the marker carries; also the key of the recorded form. */
export const parentTag = '@waymark';
const made = Symbol('waymark parent goto');

/** What a node returns to send its parent somewhere: where, and the update for the parent. */
export interface ParentCommand {
  /** A node of the parent graph (or END), declared in the node's `parentGoto`; absent: the subgraph's own way on. */
  readonly goto?: string;
  /** Fields of the parent's state, applied through the parent's reducers. */
  readonly update?: Readonly<Record<string, unknown>>;
}

/**
 * Ends the subgraph this node runs in and continues its parent at `goto` (a node of the parent
 * the node declares in `parentGoto`), with `update` applied to the parent's state through the
 * parent's reducers; the child's output mapping is not applied, and what was left of the child
 * does not run. Without `goto` the parent goes on by the subgraph's own edge or router.
 *
 * @example
 * .node('triage', (s) => (s.urgent ? parent({ goto: 'escalate', update: { reason: s.why } }) : { checked: true }), { parentGoto: ['escalate'] })
 */
export function parent(command: ParentCommand): never {
  const marker = { [parentTag]: 'parent', ...command };
  Object.defineProperty(marker, made, { value: true });
  return marker as never;
}

/**
 * The command a node returned, when `parent()` made its return value.
 *
 * @example
 * parentCommandOf(parent({ goto: 'publish' })); // { goto: 'publish' }
 */
export function parentCommandOf(value: unknown): ParentCommand | undefined {
  if (typeof value !== 'object' || value === null || !Object.hasOwn(value, made)) return undefined;
  const { [parentTag]: _tag, ...command } = value as Record<string, unknown>;
  return command as ParentCommand;
}

/**
 * A parent goto as its completion records it: the parent's update, parsed, and the node the
 * run goes to under its flat name (absent: the subgraph's own way on).
 */
export interface SentToParent {
  readonly [parentTag]: 'parent';
  readonly exit: string;
  readonly goto?: string;
  readonly update: Readonly<Record<string, unknown>> | undefined;
}

/**
 * The recorded parent goto a completion's update is, if it is one.
 *
 * @example
 * sentToParent(event.update)?.goto; // 'escalate'
 */
export function sentToParent(update: unknown): SentToParent | undefined {
  if (typeof update !== 'object' || update === null) return undefined;
  return (update as Record<string, unknown>)[parentTag] === 'parent'
    ? (update as SentToParent)
    : undefined;
}

/**
 * Where a parent goto from child node `node` (a flat name, `review/check`) lands: the exit of
 * the subgraph it runs in, and `goto` under the parent's own path (END of a nested parent is
 * that parent's exit).
 *
 * @example
 * parentTarget('mid/inner/tool', 'robert'); // { exit: 'mid/inner/__end__', goto: 'mid/robert' }
 */
export function parentTarget(
  node: string,
  goto: string | undefined,
): { readonly exit: string; readonly goto?: string } {
  const subgraph = node.slice(0, node.lastIndexOf('/'));
  const cut = subgraph.lastIndexOf('/');
  const exit = exitOf(subgraph);
  if (goto === undefined) return { exit };
  if (cut === -1) return { exit, goto };
  const enclosing = subgraph.slice(0, cut);
  return { exit, goto: goto === END ? exitOf(enclosing) : `${enclosing}/${goto}` };
}

/**
 * A recorded parent goto as a watcher is shown it: the marker, the target, and the parent's
 * fields as the node returned them (without the slots the step clears, or the parent's wrapping).
 *
 * @example
 * shownSent(sent); // { '@waymark': 'parent', goto: 'escalate', update: { log: ['urgent'] } }
 */
export function shownSent(sent: SentToParent): Readonly<Record<string, unknown>> {
  const own = ownUpdate(sent.update ?? null) as Readonly<Record<string, unknown>> | null;
  return {
    [parentTag]: 'parent',
    ...(sent.goto !== undefined && { goto: sent.goto }),
    update: own === null ? null : withoutSlots(own),
  };
}
