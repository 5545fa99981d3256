import type { ErrorValue } from '../../error/error-value.js';
import { errorValue, provenance } from '../../error/error-value.js';
import { isWaymarkError } from '../../error/waymark-error.js';
import type { CompiledGraph, RuntimeNode } from '../../graph/compiled.js';
import { untrackedReset } from '../../graph/untracked.js';
import { parseUpdate, refusalError } from './apply-update.js';
import { callUser, userError } from './call-user.js';
import { viewOf } from './fan-out.js';
import { readView } from './read-view.js';
import type { Activation, FanOut } from './snapshot.js';

type State = Readonly<Record<string, unknown>>;

/**
 * The update of an inline node (a subgraph's entry or exit), computed by the step: its mapping
 * called on the node's view (its `reads` when declared) through the user-code funnel, then
 * parsed like any node's return. A WaymarkError it throws (`INPUT_INVALID` from the child's
 * input schema) keeps its code; anything else is `NODE_FAILED`. Permanent either way: the same
 * state maps the same way again.
 *
 * @example
 * const made = inlineUpdate(graph, node, activation, state, fanOuts); // { ok: true, fields }
 */
export function inlineUpdate(
  graph: CompiledGraph,
  node: RuntimeNode,
  activation: Activation,
  state: State,
  fanOuts: Readonly<Record<string, FanOut>>,
):
  | { readonly ok: true; readonly fields: State | undefined }
  | { readonly ok: false; readonly error: ErrorValue } {
  const name = node.def.name;
  const where = { node: name, activation: activation.id, attempt: activation.attempt };
  const view = viewOf(state, fanOuts, activation, node);
  // A mapping is applied again on replay, where untracked fields hold their defaults.
  const untracked = graph.untracked;
  const base = untracked === undefined ? view.state : untrackedReset(untracked, view.state);
  const called = callUser(() => {
    const seen = node.reads === undefined ? base : readView(node.reads, base, `node "${name}"`);
    return node.inline!.fn(seen, { item: view.item, index: view.index });
  });
  if (!called.ok) {
    const { thrown } = called;
    if (isWaymarkError(thrown) && thrown.code !== 'READ_DENIED') {
      const message = thrown.message.replace(`${thrown.code}: `, '');
      const value = errorValue(where, thrown.code, thrown.errorClass, message, thrown.details);
      return { ok: false, error: { ...value, ...provenance(thrown) } };
    }
    return {
      ok: false,
      error: userError(where, 'NODE_FAILED', `the mapping of subgraph "${name}" threw`, thrown),
    };
  }
  const parsed = parseUpdate(graph, node, called.value);
  return parsed.ok ? parsed : { ok: false, error: refusalError(where, parsed) };
}
