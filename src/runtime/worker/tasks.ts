import type { CompiledGraph } from '../../graph/compiled.js';
import type { ClaimedTask, Store } from '../../store/store.js';
import type { WorkQueue } from '../../store/work-queue.js';
import { type Clock, systemClock } from '../clock.js';
import type { LeaseKeeper } from '../engine/lease-keeper.js';
import type { Telemetry } from '../watch/telemetry.js';
import { runTask } from './run-task.js';
import type { Slots } from './slots.js';
import type { TaskFinisher } from './task-finisher.js';
import type { WorkerEvent } from './worker-event.js';

/** A task whose body runs in this worker. */
interface InFlight {
  readonly task: ClaimedTask;
  readonly stop: AbortController;
  readonly done: Promise<void>;
}

/** What the tasks of a worker share with it. */
export interface TaskContext {
  readonly store: Store & WorkQueue;
  readonly graphs: ReadonlyMap<string, CompiledGraph>;
  readonly clock: Clock;
  readonly keeper: LeaseKeeper;
  readonly slots: Slots;
  readonly finisher: TaskFinisher;
  readonly telemetry?: { readonly telemetry: Telemetry; readonly worker: string };
  readonly tell: (event: WorkerEvent) => void;
  /** Whether a freed slot may wait for news of tasks instead of claiming at once. */
  readonly quiet: () => boolean;
}

/**
 * The claimed tasks a worker runs: each body runs under its task's lease, kept by the worker's
 * keeper; its result goes to its run's inbox through the worker's finisher, fenced by that
 * lease. A task whose lease is lost (cancelled, or taken over) has its body's signal aborted and
 * its slot freed; one whose lease this worker could not renew in time is stopped the same way
 * and its failure, most likely the stop's own doing, is not written (a completion it reaches
 * anyway is offered to the fence like any result).
 *
 * @example
 * const tasks = new Tasks(context);
 * for (const task of claimed) tasks.start(task, sentAt);
 */
export class Tasks {
  readonly #context: TaskContext;
  readonly #inFlight = new Map<string, InFlight>();

  constructor(context: TaskContext) {
    this.#context = context;
  }

  get size(): number {
    return this.#inFlight.size;
  }

  /** Starts a claimed task's body; its slot was counted by the claim. */
  start(task: ClaimedTask, sent: number): void {
    const context = this.#context;
    const { store, keeper, slots, finisher, tell } = context;
    const key = `${task.runId}/${task.activation}`;
    const stop = new AbortController();
    const graph = context.graphs.get(task.graph)!;
    const slot = slots.claimed();
    let lost: 'lost' | 'lapsed' | undefined;
    const kept = keeper.keepTask(task, sent, (why) => {
      if (why === 'stopped') return;
      lost = why;
      stop.abort(
        new Error(
          why === 'lost'
            ? 'this worker lost the task'
            : "this worker could not renew the task's lease in time",
        ),
      );
      if (this.#inFlight.get(key)?.stop === stop) this.#inFlight.delete(key);
      slots.free(slot, context.quiet());
      tell({ type: 'lost', runId: task.runId, activation: task.activation });
    });
    const done = runTask(store, graph, task, {
      clock: context.clock,
      signal: stop.signal,
      // The body ended: its slot is free while its result is written. Once the result is in
      // the inbox, this worker's fold loop claims the run (or finds that another fold holds it:
      // that one claims again after its commit, and finds the result there).
      finish: async (t, attempt, at, ended) => {
        slots.free(slot, context.quiet());
        // Stopped for a lease this worker could not renew: a failure is most likely the stop's
        // own doing, and the next claim runs the node again. A body that completed anyway is
        // offered to the fence like any result: taken over, it is refused.
        if (lost === 'lapsed' && ended.event.type !== 'completed') return false;
        if (lost === 'lost') return false;
        const held = await finisher.finish(t, attempt, at, () => lost === 'lost');
        if (held) slots.nudge('runs');
        return held;
      },
      ...(context.telemetry !== undefined && { telemetry: context.telemetry }),
    })
      .then((recorded) => {
        tell({ type: 'task', runId: task.runId, activation: task.activation, recorded });
        if (!recorded && lost === undefined)
          tell({ type: 'lost', runId: task.runId, activation: task.activation });
      })
      .catch((error: unknown) => tell({ type: 'error', error }))
      .finally(() => {
        kept.release();
        // Not the claim that came after it: a task stopped for its lease may be claimed again
        // by this worker while its body, deaf to its signal, still runs.
        if (this.#inFlight.get(key)?.stop === stop) this.#inFlight.delete(key);
        slots.free(slot, context.quiet());
      });
    this.#inFlight.set(key, { task, stop, done });
  }

  /** Lets the bodies in flight finish within `graceMs`; gives back the tasks still running then. */
  async drain(graceMs: number, signal: AbortSignal): Promise<void> {
    const pending = [...this.#inFlight.values()].map((t) => t.done);
    if (pending.length > 0)
      await Promise.race([Promise.all(pending), systemClock.sleep(graceMs, signal)]);
    for (const { task, stop } of this.#inFlight.values()) {
      stop.abort(new Error('the worker is shutting down'));
      await this.#context.store.releaseTask(task).catch(() => {});
    }
  }
}
