import type { RunRecord, Store, WorkerRecord } from '../../store/store.js';
import { servesWorkers } from '../../store/work-queue.js';
import { ownerIsDead } from '../engine/identity.js';

/**
 * Who moves a `running` run on now. Workers hold a run's own lease only while they fold it; between
 * folds its node bodies run as tasks under the tasks' leases, so a run workers are busy with has
 * no live lease of its own, and must not read as interrupted.
 *
 * - `owner`: a process holds the run's lease (an in-process driver, or a worker folding it);
 * - `workers`: live workers run its graph, and hold its tasks or will claim them (or fold its
 *   inbox, or take it up where it was left running);
 * - `queued`: work is queued for it (tasks, an inbox), but no live worker runs its graph;
 * - `nobody`: interrupted; `waymark resume` continues it.
 */
export type Driver =
  | { readonly kind: 'owner' }
  | {
      readonly kind: 'workers';
      /** Tasks a live worker holds now, and tasks queued for one. */
      readonly held: number;
      readonly queued: number;
      /** The live workers holding its tasks; all live workers of its graph when none holds one. */
      readonly workers: readonly Pick<WorkerRecord, 'id' | 'host' | 'pid'>[];
    }
  | { readonly kind: 'queued'; readonly queued: number }
  | { readonly kind: 'nobody' };

/** Live workers, read once for a listing of many runs: see {@link driverOf}. */
export type LiveWorkers = readonly WorkerRecord[] | undefined;

/** The live workers of a store that serves workers (undefined for one that does not). */
export async function liveWorkers(store: Store): Promise<LiveWorkers> {
  if (!servesWorkers(store)) return undefined;
  return (await store.listWorkers()).filter((w) => w.live);
}

/**
 * Who moves `run` on, without reading anything more: its lease's holder, or live workers of its
 * graph (they hold its tasks, or will claim them or take it up). Null when neither: the run is
 * queued for a worker that is not there, or interrupted ({@link driverOf} tells which).
 */
export function movedOnBy(run: RunRecord, workers: LiveWorkers): 'owner' | 'workers' | null {
  if (run.status !== 'running') return null;
  const lease = run.lease;
  if (lease?.live === true && !ownerIsDead(lease)) return 'owner';
  return workersOf(run, workers).length > 0 ? 'workers' : null;
}

/**
 * Who moves `run` on, for a `running` one (`nobody` for any other status), with its tasks and
 * inbox counted when its own lease is not held; `workers` from {@link liveWorkers}, read once
 * for a listing.
 *
 * @example
 * const workers = await liveWorkers(store);
 * const driver = await driverOf(store, run, workers); // { kind: 'workers', held: 3, ... }
 */
export async function driverOf(
  store: Store,
  run: RunRecord,
  workers: LiveWorkers,
): Promise<Driver> {
  const by = movedOnBy(run, workers);
  if (by === 'owner') return { kind: 'owner' };
  if (run.status !== 'running' || !servesWorkers(store)) return { kind: 'nobody' };
  const [tasks, inbox] = await Promise.all([store.listTasks(run.id), store.inbox(run.id)]);
  const ofGraph = workersOf(run, workers);
  const byId = new Map(ofGraph.map((w) => [w.id, w]));
  const holders = new Map<string, WorkerRecord>();
  for (const task of tasks) {
    const holder = byId.get(task.owner);
    if (holder !== undefined) holders.set(holder.id, holder);
  }
  const held = tasks.filter((t) => byId.has(t.owner)).length;
  const queued = tasks.length - held + inbox.length;
  if (by === 'workers') {
    const named = held > 0 ? [...holders.values()] : ofGraph;
    return {
      kind: 'workers',
      held,
      queued,
      workers: named.map(({ id, host, pid }) => ({ id, host, pid })),
    };
  }
  return queued > 0 ? { kind: 'queued', queued } : { kind: 'nobody' };
}

function workersOf(run: RunRecord, workers: LiveWorkers): readonly WorkerRecord[] {
  return (workers ?? []).filter((w) =>
    w.graphs.some((g) => g.name === run.graph && g.hash === run.graphHash),
  );
}
