import type { CompiledGraph } from '../../graph/compiled.js';
import type { WorkspaceDef } from '../../graph/workspace.js';
import { endRunWorkspaces } from '../../workspace/retention.js';
import { openWorkspace, type WorkspaceSession } from '../../workspace/session.js';
import type { Activation, Snapshot } from '../core/snapshot.js';
import type { AttemptContext } from './context.js';
import type { AttemptInput } from './execute.js';

/**
 * Opens the working copy of a workspace node's attempt and hands it to `ctx.workspace`. A
 * `patches` join's copy starts at the merge of its branches' patches (a conflict is the
 * attempt's `MERGE_CONFLICT`), any other at the patch in the node's field or the recorded base.
 * It lives in the attempt, not in a host: in process and on a worker alike, the attempt that
 * runs the body is the one that makes and ends its copy.
 *
 * @example
 * const session = await openAttemptWorkspace(def, activation, input, ctx);
 */
export async function openAttemptWorkspace(
  def: WorkspaceDef,
  activation: Activation,
  input: AttemptInput,
  ctx: AttemptContext,
): Promise<WorkspaceSession> {
  const join = activation.join;
  const session = await openWorkspace(def, {
    runId: input.runId,
    activationId: activation.id,
    attempt: activation.attempt,
    node: activation.node,
    state: input.state,
    ...(join?.patches !== undefined && {
      join: { branches: join.merged, patches: join.patches },
    }),
    ledger: input.ledger,
    signal: ctx.signal,
    now: () => input.clock.now(),
    exec: (argv, options) => ctx.exec(argv, options),
  });
  ctx.attachWorkspace(session);
  return session;
}

/**
 * The node's update with its patch in the workspace's field: the runtime sets that field, so
 * what the body returned for it is replaced.
 *
 * @example
 * update = withPatch(update, 'code', patch);
 */
export function withPatch(update: unknown, field: string, patch: unknown): unknown {
  const own = typeof update === 'object' && update !== null ? update : {};
  return { ...own, [field]: patch };
}

/** Graphs with a workspace node, found once each: a run of any other touches no disk at its end. */
const withWorkspaces = new WeakMap<CompiledGraph, boolean>();

/**
 * What a host does when it sees a run stop: the run's working copies go if it succeeded or was
 * cancelled, and stay for a look (until their `keepFailedMs`) if it failed or timed out. A copy
 * that cannot be removed now is left to the sweep; it never fails the run.
 *
 * @example
 * await endAttemptWorkspaces(graph, end.snapshot);
 */
export async function endAttemptWorkspaces(
  graph: CompiledGraph,
  snapshot: Pick<Snapshot, 'runId' | 'status'>,
): Promise<void> {
  let has = withWorkspaces.get(graph);
  if (has === undefined) {
    has = [...graph.nodes.values()].some((node) => node.def.workspace !== undefined);
    withWorkspaces.set(graph, has);
  }
  if (has) await endRunWorkspaces(snapshot.runId, snapshot.status).catch(() => {});
}
