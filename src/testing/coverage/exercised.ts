import type { CompiledGraph } from '../../graph/compiled.js';
import { END } from '../../graph/end.js';
import { declaredName } from '../../graph/subgraph.js';
import { decodeEvent, decodeSnapshot } from '../../runtime/codec/codec.js';
import type { Activation, Snapshot } from '../../runtime/core/snapshot.js';
import { step } from '../../runtime/core/step.js';
import type { Store } from '../../store/store.js';
import { capItem, errorItem, joinItem, routeItem, waitItem } from './items.js';

/** Why a run's coverage was not read: it ran another graph, or another version of this one. */
export type CoverageSkip = 'other-graph' | 'graph-changed' | 'not-found';

/** What one recorded run exercised: the ids of the items, or why it was not read. */
export type Exercised =
  | { readonly runId: string; readonly items: ReadonlySet<string> }
  | { readonly runId: string; readonly skipped: CoverageSkip };

/**
 * Reads which items of `graph` a stored run exercised, through the public `Store` interface:
 * its events are folded through `step` from the snapshot it was created with (as a replay
 * does), and each step's decision is read off what it scheduled: an activation reached from a
 * router's node is that route, one carrying an error came along an `onError` edge, one carrying
 * a join summary is a merged join; a `VISIT_CAP` or `JOIN_FAILED` error recorded is a cap hit or
 * a failed join; an `answered` event is a wait answered. A router's node that completes and
 * schedules nothing, records nothing, routed to END.
 *
 * @example
 * const { items } = await exercisedBy(store, triage, runId);
 */
export async function exercisedBy(
  store: Store,
  graph: CompiledGraph,
  runId: string,
): Promise<Exercised> {
  const run = await store.getRun(runId);
  if (run === undefined) return { runId, skipped: 'not-found' };
  if (run.graph !== graph.name) return { runId, skipped: 'other-graph' };
  const first = await store.snapshotAt(runId, 0);
  if (first === undefined || first.seq !== 0) return { runId, skipped: 'not-found' };
  let snapshot = decodeSnapshot(graph, first.data, runId);
  // A run of an older version could have taken routes this graph no longer declares.
  if (snapshot.graph.hash !== graph.hash) return { runId, skipped: 'graph-changed' };
  const items = new Set<string>();
  const nodeOf = new Map<string, string>();
  const remember = (s: Snapshot) => {
    for (const a of s.pending) nodeOf.set(a.id, a.node);
  };
  remember(snapshot);
  for (const stored of await store.events(runId)) {
    const event = decodeEvent(stored.event, runId, stored.seq);
    const before = snapshot;
    const result = step(graph, snapshot, event);
    snapshot = result.snapshot;
    const known = new Set(before.pending.map((a) => a.id));
    const added = snapshot.pending.filter((a) => !known.has(a.id) && !nodeOf.has(a.id));
    remember(snapshot);
    const errors = snapshot.errors.slice(before.errors.length);
    for (const error of errors) {
      if (error.code === 'VISIT_CAP') items.add(capItem(declaredName(error.node)).id);
      if (error.code === 'JOIN_FAILED') items.add(joinItem(declaredName(error.node), 'failed').id);
    }
    for (const a of added) markReached(graph, a, nodeOf, items);
    if (event.type === 'answered') {
      const node = nodeOf.get(event.activation);
      if (node !== undefined) items.add(waitItem(declaredName(node)).id);
    }
    const done = result.outcome;
    if (event.type === 'completed' && done?.status === 'succeeded') {
      const router = graph.nodes.get(done.activation.node)?.router;
      const from = done.activation.id;
      const routed = added.some((a) => a.parent === from) || errors.length > 0;
      if (router?.targets.has(END) && !routed)
        items.add(routeItem(declaredName(done.activation.node), END).id);
      // A target refused at its cap was still the router's choice.
      for (const error of errors)
        if (error.code === 'VISIT_CAP' && router?.targets.has(error.node))
          items.add(routeItem(declaredName(done.activation.node), declaredName(error.node)).id);
    }
  }
  return { runId, items };
}

function markReached(
  graph: CompiledGraph,
  a: Activation,
  nodeOf: ReadonlyMap<string, string>,
  items: Set<string>,
): void {
  const name = declaredName(a.node);
  if (a.error !== undefined) {
    const failed = graph.nodes.get(a.error.node);
    if (failed?.def.onError === a.node) items.add(errorItem(declaredName(a.error.node), name).id);
  } else if (a.parent !== null) {
    const parent = nodeOf.get(a.parent);
    const router = parent === undefined ? undefined : graph.nodes.get(parent)?.router;
    if (parent !== undefined && router?.targets.has(a.node))
      items.add(routeItem(declaredName(parent), name).id);
  }
  if (a.join !== undefined) items.add(joinItem(name, 'merged').id);
}
