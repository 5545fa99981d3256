import type { CompiledGraph, RuntimeNode } from '../../graph/compiled.js';
import { END } from '../../graph/end.js';
import { mergeFields } from './apply-update.js';
import type { ResumeDraft } from './draft.js';
import { deepFreeze } from './freeze.js';
import { routeOf } from './route.js';
import type { RunEvent } from './snapshot.js';

type Moved = Extract<RunEvent, { type: 'moved' }>;
type Patched = Extract<RunEvent, { type: 'patched' }>;

/**
 * Moves a stopped or interrupted run to another node (`resume(..., { goto })`): it continues as
 * a resume does (restamped, with the event's deadline and step limit), its pending activations
 * are dropped (their waits closed, their attempts stopped) and `to` is admitted afresh, through
 * its visit cap like any activation, on the state as it stands.
 *
 * @example
 * const t = new Transition(graph, snapshot); moveDraft(t, { type: 'moved', to: 'draft', dropped: ['review:1'] });
 */
export function moveDraft(d: ResumeDraft, event: Moved): void {
  const { type: _type, to, dropped, ran, ...limits } = event;
  d.resumeUnder({ type: 'resumed', ...limits });
  drop(d, dropped);
  if (ran !== undefined) d.ranBefore(ran);
  d.enqueue(to, null);
}

/**
 * A patch that stands in for node `asNode`'s completion: the pending activations go, the update
 * is merged, and what follows the node (its edge, or its router run on the new state) is
 * admitted paused, so the run waits for a resume (or a person, when that is a person node).
 * False when the update or the route cannot be applied: patchState() refuses those first.
 *
 * @example
 * patchAsNode(t, { type: 'patched', update, by, reason, asNode: 'review', dropped: ['review:1'] });
 */
export function patchAsNode(d: ResumeDraft, event: Patched & { asNode: string }): boolean {
  const merged = mergeFields(d.graph, d.state, deepFreeze(structuredClone(event.update)));
  if (!merged.ok) return false;
  const next = routeAfter(d.graph, event.asNode, merged.state);
  if (!next.ok) return false;
  drop(d, event.dropped ?? []);
  d.state = merged.state;
  if (next.target === undefined || next.target === END) return true;
  if (event.ran !== undefined) d.ranBefore(event.ran);
  d.pausing = true;
  d.enqueue(next.target, null);
  d.pausing = false;
  return true;
}

/**
 * Where a run goes after node `name` completes with `state`: its edge or its router's choice.
 * A subgraph node is left by its exit, which carries the node's own edge or router.
 *
 * @example
 * routeAfter(graph, 'review', state); // { ok: true, target: 'publish' }
 */
export function routeAfter(
  graph: CompiledGraph,
  name: string,
  state: Readonly<Record<string, unknown>>,
): ReturnType<typeof routeOf> {
  const node = graph.nodes.get(name)!;
  const leaving: RuntimeNode =
    node.inline?.scope === 'enter' ? graph.nodes.get(`${name}/__end__`)! : node;
  // Routers see untracked fields at their defaults, as on every replay of the decision.
  const activation = { id: `${name}:0`, node: name, attempt: 0, parent: null };
  return routeOf(leaving, activation, state, graph.untracked);
}

function drop(d: ResumeDraft, ids: readonly string[]): void {
  const doomed = new Set(ids);
  const present = d.pending.filter((a) => doomed.has(a.id)).map((a) => a.id);
  // Nothing of a run an operator moves is in flight (it waits, stopped, or its process died):
  // its dropped activations have no attempt to stop, and their ids may be admitted again.
  if (present.length > 0) d.abort(present, false);
}
