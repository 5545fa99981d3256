import { storeLedger } from '../../effects/ledger.js';
import { WaymarkError } from '../../error/waymark-error.js';
import type { CompiledGraph } from '../../graph/compiled.js';
import type { Store } from '../../store/store.js';
import { newRunId, systemClock } from '../clock.js';
import { decodeEvent, decodeSnapshot } from '../codec/codec.js';
import type { Snapshot } from '../core/snapshot.js';
import { step } from '../core/step.js';
import { Journal } from '../engine/journal.js';
import { defaultLeaseMs, holdRun } from '../engine/ownership.js';
import { applyFields } from '../ops/apply-fields.js';
import { labelsOf } from '../ops/labels.js';
import type { RunResult } from '../run-types.js';
import { driveInProcess } from './in-process.js';
import type { ResumeOptions } from './resume.js';
import { reuseIndex } from './reuse.js';
import { reenter, rewindTarget } from './rewind-target.js';

/** Options of {@link rewind}. */
export interface RewindOptions extends ResumeOptions {
  /**
   * The node to run again: the new run starts from the checkpoint just before its last
   * activation. A subgraph's node runs its child again from the child's first node.
   */
  readonly to: string;
  /** State fields to change at that checkpoint, through their reducers: the editor's note. */
  readonly update?: Readonly<Record<string, unknown>>;
  /** The new run's id; a fresh UUID when absent. */
  readonly runId?: string;
  /** The new run's labels; by default the earlier run's. */
  readonly labels?: Readonly<Record<string, string>>;
}

/**
 * Starts a new run from the checkpoint before `to`'s last activation in a stored run, with an
 * optional update (a note) applied to the state there. Nothing before that point runs again;
 * from there on, every activation whose input hash is unchanged reads its recorded output back
 * from the earlier run, and the rest run. The earlier run is left as it was.
 * @throws WaymarkError `RUN_NOT_FOUND`, `GRAPH_MISMATCH` (another graph, or one changed since the
 *   run: its history would replay differently), `OPTIONS_INVALID` (a node the run never reached,
 *   or an update that does not match the state).
 *
 * @example
 * const fixed = await rewind(store, blog, runId, {
 *   to: 'draft',
 *   update: { notes: ['the second section misstates the pricing change'] },
 * });
 */
export async function rewind<S, I, O = S>(
  store: Store,
  graph: CompiledGraph<S, I, O>,
  runId: string,
  options: RewindOptions,
): Promise<RunResult<S, O>> {
  const g = graph as CompiledGraph;
  const record = await store.getRun(runId);
  if (record === undefined) throw refuse('RUN_NOT_FOUND', `there is no run "${runId}"`);
  if (record.graph !== g.name || record.graphHash !== g.hash) {
    throw refuse(
      'GRAPH_MISMATCH',
      `run "${runId}" ran under graph "${record.graph}" ${record.graphHash.slice(0, 12)}; rewind replays its history, so it needs that graph`,
    );
  }
  if (!g.nodes.has(options.to))
    throw refuse('OPTIONS_INVALID', `graph "${g.name}" has no node "${options.to}"`);
  // A subgraph's node runs its child again from the child's first node.
  const to = rewindTarget(g, options.to);

  const first = await store.snapshotAt(runId, 0);
  let snapshot = decodeSnapshot(g, first!.data, runId);
  let before: Snapshot | undefined;
  // Replay the whole history; keep the last checkpoint at which `to` was scheduled, not yet run.
  for (const stored of await store.events(runId)) {
    const next = step(g, snapshot, decodeEvent(stored.event, runId, stored.seq)).snapshot;
    const had = new Set(snapshot.pending.map((a) => a.id));
    if (next.pending.some((a) => a.node === to && !had.has(a.id))) before = next;
    snapshot = next;
  }
  if (before === undefined)
    throw refuse('OPTIONS_INVALID', `run "${runId}" never reached node "${options.to}"`);
  if (options.update !== undefined && before.pending.some((a) => a.node === to && a.branch)) {
    throw refuse(
      'OPTIONS_INVALID',
      `"${options.to}" ran inside a branch; rewind with an update needs a node on the main path`,
    );
  }

  let state = applyFields(g, before.state, options.update, 'the rewind update');
  // Into a subgraph with a note: the child starts from the input the noted state maps to.
  if (options.update !== undefined && to !== options.to) {
    const first = before.pending.find((a) => a.node === to)!;
    state = reenter(g, options.to, first, state);
  }

  const clock = options.clock ?? systemClock;
  const id = options.runId ?? newRunId();
  const start: Snapshot = {
    status: 'running',
    runId: id,
    graph: before.graph,
    state,
    // Fresh attempts, and waits asked again under the new run's request ids.
    pending: before.pending.map((a) =>
      a.waiting === undefined
        ? { ...a, attempt: 1 }
        : { ...a, attempt: 1, waiting: { ...a.waiting, requestId: `${id}/${a.id}` } },
    ),
    visits: before.visits,
    steps: before.steps,
    errors: before.errors,
    fanOuts: before.fanOuts,
    limits: before.limits,
    spent: before.spent,
    // The earlier run's quarantine stays with it: the new run starts with none of its own.
    quarantine: [],
  };
  // The new run carries on the old one's labels (the CLI's graph file) unless told otherwise.
  const inherited = labelsOf(record);
  const labels = options.labels ?? (Object.keys(inherited).length > 0 ? inherited : undefined);
  const reuse = await reuseIndex(store, runId);
  const journal = await Journal.create(
    store,
    g,
    start,
    clock,
    options.snapshotEvery,
    labels,
    undefined,
    [runId],
  );
  const held = await holdRun(store, id, options.leaseMs ?? defaultLeaseMs);
  journal.epoch = held.lease.epoch;
  return driveInProcess(g, start, [{ type: 'resumed' }], {
    ...options,
    store,
    journal,
    ledger: storeLedger(store, id, () => clock.now()),
    hashInputs: true,
    reuse,
    lease: held,
  }) as Promise<RunResult<S, O>>;
}

function refuse(code: 'RUN_NOT_FOUND' | 'GRAPH_MISMATCH' | 'OPTIONS_INVALID', message: string) {
  return new WaymarkError(code, message, { retryable: false });
}
