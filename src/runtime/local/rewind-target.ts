import { WaymarkError } from '../../error/waymark-error.js';
import type { CompiledGraph } from '../../graph/compiled.js';
import { mergeFields } from '../core/apply-update.js';
import { inlineUpdate } from '../core/inline.js';
import type { Activation, Snapshot } from '../core/snapshot.js';

/**
 * The node a rewind to `to` starts at. A subgraph's node is no step of its own (its entry is
 * applied in the transition that reaches it), so a rewind to it is a rewind to its child's first
 * node, through nested subgraphs whose first node is a subgraph again; any other node is itself.
 *
 * @example
 * rewindTarget(post, 'review'); // 'review/read'
 */
export function rewindTarget(graph: CompiledGraph, to: string): string {
  let target = to;
  for (let node = graph.nodes.get(target); node?.inline?.scope === 'enter'; ) {
    target = node.next!;
    node = graph.nodes.get(target);
  }
  return target;
}

/**
 * The state a rewind to subgraph `to` starts its child with, after the rewind's update: the
 * child's input mapped again from the updated state, as its entry would map it (each nested
 * entry in turn), so that a note for the child reaches it. `first` is the pending activation of
 * the child's first node at the rewind's checkpoint, on the main path.
 * @throws WaymarkError `OPTIONS_INVALID` when a mapping refuses the updated state.
 *
 * @example
 * const state = reenter(post, 'review', first, applyFields(post, before.state, update, what));
 */
export function reenter(
  graph: CompiledGraph,
  to: string,
  first: Activation,
  state: Snapshot['state'],
): Snapshot['state'] {
  let entered = state;
  for (let node = graph.nodes.get(to); node?.inline?.scope === 'enter'; ) {
    const name = node.def.name;
    const made = inlineUpdate(graph, node, { ...first, node: name }, entered, {});
    if (!made.ok) throw cannotEnter(name, made.error.message);
    if (made.fields !== undefined) {
      const merged = mergeFields(graph, entered, made.fields);
      if (!merged.ok) throw cannotEnter(name, merged.message);
      entered = merged.state;
    }
    node = graph.nodes.get(node.next!);
  }
  return entered;
}

function cannotEnter(subgraph: string, why: string): WaymarkError {
  return new WaymarkError(
    'OPTIONS_INVALID',
    `the rewind update cannot enter subgraph "${subgraph}" again: ${why}`,
    { retryable: false },
  );
}
