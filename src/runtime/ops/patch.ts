import { WaymarkError } from '../../error/waymark-error.js';
import type { CompiledGraph } from '../../graph/compiled.js';
import type { Store } from '../../store/store.js';
import { type Clock, systemClock } from '../clock.js';
import { currentSnapshot } from '../codec/current.js';
import { loadStored } from '../codec/load-stored.js';
import { routeAfter } from '../core/move.js';
import type { RunEvent, Snapshot } from '../core/snapshot.js';
import { isPatchable, step } from '../core/step.js';
import { commitExtras } from '../engine/commit-extras.js';
import { Journal } from '../engine/journal.js';
import { applyFields, parseFields } from './apply-fields.js';
import { checkMoveTarget } from './move-target.js';
import { ranBefore } from './ran-before.js';

/** Options of {@link patchState}. */
export interface PatchOptions {
  /** Who changed the state: recorded with the change. */
  readonly by: string;
  /** Why: recorded with the change. */
  readonly reason: string;
  /**
   * The patch stands in for this node's completion (LangGraph's `updateState(values, asNode)`):
   * checked against the node's `writes`, it replaces the run's pending activations, and what
   * follows the node (its edge, or its router run on the new state) waits for a resume.
   */
  readonly asNode?: string;
  readonly clock?: Clock;
}

/**
 * Changes the state of a run that waits for a person, or that failed or timed out, before it
 * continues (LangGraph's `updateState`): one recorded event naming the fields, who and why,
 * each field checked by its schema and merged through its reducer, as a node's update is. The
 * history is never edited: the change is its next step, replayed like any other, shown by
 * `history()` and the run's stream (`state.patched`). The run stays where it was; answer or
 * resume it to go on. With `asNode` the patch is that node's completion instead: the run's
 * pending activations are dropped, and what follows the node waits, paused, for a resume.
 * @throws WaymarkError `RUN_NOT_FOUND`, `GRAPH_MISMATCH`, `GOTO_INVALID` (`asNode` is not a
 *   node the run can be at, or its router refuses the new state), `WRITE_DENIED` (a field
 *   `asNode` does not write), `RUN_NOT_PATCHABLE` (it is running,
 *   succeeded or cancelled, or a fan-out of it is open), `OPTIONS_INVALID` (a field the state
 *   does not have, a value its schema refuses, no `by` or `reason`), `STORE_CONFLICT` (another
 *   process committed first: try again). Nothing is recorded when it throws.
 *
 * @example
 * await patchState(store, triage, runId, { severity: 'high' }, { by: 'ana', reason: 'customer escalation' });
 */
export async function patchState<S, I>(
  store: Store,
  graph: CompiledGraph<S, I>,
  runId: string,
  update: Readonly<Partial<S>>,
  options: PatchOptions,
): Promise<Snapshot> {
  const g = graph as CompiledGraph;
  for (const key of ['by', 'reason'] as const) {
    if (typeof options[key] !== 'string' || options[key].trim() === '') {
      throw new WaymarkError(
        'OPTIONS_INVALID',
        `a state patch names ${key === 'by' ? 'who makes it' : 'why'}: give a non-empty \`${key}\``,
        {
          retryable: false,
        },
      );
    }
  }
  const loaded = await loadStored(store, runId);
  const before = currentSnapshot(g, loaded);
  const asNode =
    options.asNode === undefined ? undefined : checkMoveTarget(g, before, options.asNode, 'asNode');
  if (!isPatchable(before)) {
    const why =
      before.status === 'waiting' || before.status === 'failed' || before.status === 'timed_out'
        ? 'a fan-out of it is open (its branches see the state as it was when it opened)'
        : `it is ${before.status}`;
    throw new WaymarkError(
      'RUN_NOT_PATCHABLE',
      `run "${runId}" cannot have its state changed: ${why}; only a run that waits for a person, failed or timed out can`,
      { retryable: false, details: { runId, status: before.status } },
    );
  }
  // Checked and merged here, to refuse before anything is recorded; the event keeps the parsed
  // fields, and step() merges them the same way on every replay.
  const fields = parseFields(g, update as Record<string, unknown>, 'the state patch');
  // An empty patch would record who and why against a change that is not there; as a node it
  // still stands in for that node's completion.
  if (asNode === undefined && Object.keys(fields).length === 0) {
    throw new WaymarkError(
      'OPTIONS_INVALID',
      `the state patch of run "${runId}" sets no field: give the fields to change, or \`asNode\` to complete a node without changes`,
      { retryable: false, details: { runId } },
    );
  }
  // Nothing would keep it: the patch is stored without it, and the next drive starts it afresh.
  const untracked = Object.keys(fields).filter((f) => g.untracked?.fields.has(f) === true);
  if (untracked.length > 0)
    throw new WaymarkError(
      'OPTIONS_INVALID',
      `the state patch sets untracked ${untracked.map((f) => `"${f}"`).join(', ')}: an untracked field is never stored, and a resumed run starts it from its default`,
      { retryable: false, details: { fields: untracked } },
    );
  const state = applyFields(g, before.state, fields, 'the state patch');
  if (asNode !== undefined) checkAsNode(g, runId, asNode, fields, state);
  const event: RunEvent = {
    type: 'patched',
    update: fields,
    by: options.by,
    reason: options.reason,
    ...(asNode !== undefined && {
      asNode,
      dropped: before.pending.map((a) => a.id),
      ran: await ranBefore(store, g, runId),
    }),
  };
  const { snapshot: after, commands } = step(g, before, event);
  const clock = options.clock ?? systemClock;
  // Unfenced by a lease (nothing drives a run that waits or stopped), fenced by seq. A patch as
  // a node closes the waits it drops and may open its successor's, in the same commit.
  const journal = new Journal(store, g, runId, loaded.run.seq, clock);
  const extras = commitExtras(g, event, before, after, commands, clock.now());
  await journal.record(event, after, [], extras);
  return after;
}

/** A patch as `asNode` writes only what that node may, and the node's router takes its state. */
function checkAsNode(
  graph: CompiledGraph,
  runId: string,
  asNode: string,
  fields: Readonly<Record<string, unknown>>,
  state: Snapshot['state'],
): void {
  const node = graph.nodes.get(asNode)!;
  const writes =
    node.inline?.scope === 'enter' ? graph.nodes.get(`${asNode}/__end__`)!.writes : node.writes;
  const denied = writes === undefined ? [] : Object.keys(fields).filter((f) => !writes.has(f));
  if (denied.length > 0) {
    throw new WaymarkError(
      'WRITE_DENIED',
      `the state patch of run "${runId}" as node "${asNode}" sets ${denied.map((f) => `"${f}"`).join(', ')}, which "${asNode}" does not declare in its writes [${[...writes!].join(', ')}]`,
      { retryable: false, details: { node: asNode, fields: denied } },
    );
  }
  const routed = routeAfter(graph, asNode, state);
  if (!routed.ok) {
    throw new WaymarkError(
      'GOTO_INVALID',
      `the state patch of run "${runId}" as node "${asNode}" cannot go on: ${routed.error.code} ${routed.error.message}`,
      { retryable: false, details: { option: 'asNode', node: asNode, cause: routed.error.code } },
    );
  }
}
