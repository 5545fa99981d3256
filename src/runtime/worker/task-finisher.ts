import { isWaymarkError } from '../../error/waymark-error.js';
import type { ClaimedTask, FinishedTask } from '../../store/store.js';
import type { WorkQueue } from '../../store/work-queue.js';
import { systemClock } from '../clock.js';

interface Waiting extends FinishedTask {
  readonly resolve: (held: boolean) => void;
  readonly reject: (error: unknown) => void;
  readonly gone: () => boolean;
}

/** Most results one statement carries: a bound on its size, not a batching delay. */
const maxBatch = 500;

// A store that cannot be reached for a moment: the results are written again after 50, 100 ...
// ms, up to 2 s between tries, while their tasks' leases are still kept.
const backoffMs = 50;
const backoffCapMs = 2_000;

/**
 * A worker's writer of finished tasks: the results of tasks that end together go to the store
 * in one statement (`finishTasks`) rather than one each, so that a wave of branches ending at
 * once costs one round trip and does not queue the worker's other statements behind it. It
 * waits for nothing: a result is written in the loop turn after its task ends, with those that
 * ended in the same turn or while the statement before was in flight.
 *
 * @example
 * const finisher = new TaskFinisher(store);
 * const held = await finisher.finish(task, attempt, Date.now());
 */
export class TaskFinisher {
  readonly #store: Pick<WorkQueue, 'finishTasks'>;
  readonly #wake: () => boolean;
  readonly #queue: Waiting[] = [];
  #writing = false;

  /** `wake`: whether the results written now wake idle workers to fold them (`finishTasks`). */
  constructor(
    store: Pick<WorkQueue, 'finishTasks'>,
    options: { readonly wake?: () => boolean } = {},
  ) {
    this.#store = store;
    this.#wake = options.wake ?? (() => true);
  }

  /**
   * Writes the task's result; false when its lease was lost (nothing was written for it). A
   * write that fails for a store that cannot be reached is tried again after a pause, until it
   * lands or `gone` says the task's lease is no longer kept (then false: the next claim runs it).
   */
  finish(
    task: ClaimedTask,
    attempt: string,
    at: number,
    gone: () => boolean = () => false,
  ): Promise<boolean> {
    return new Promise((resolve, reject) => {
      this.#queue.push({ task, attempt, at, resolve, reject, gone });
      if (this.#writing) return;
      this.#writing = true;
      setImmediate(() => void this.#write());
    });
  }

  async #write(): Promise<void> {
    let failures = 0;
    try {
      while (this.#queue.length > 0) {
        const batch: Waiting[] = [];
        for (const w of this.#queue.splice(0, maxBatch)) {
          if (w.gone()) w.resolve(false);
          else batch.push(w);
        }
        if (batch.length === 0) continue;
        try {
          const held = await this.#store.finishTasks(batch, { wake: this.#wake() });
          failures = 0;
          for (const [i, w] of batch.entries()) w.resolve(held[i] === true);
        } catch (error) {
          if (!isWaymarkError(error) || !error.code.startsWith('STORE_') || !error.retryable) {
            for (const w of batch) w.reject(error);
            continue;
          }
          // Nothing was written, or all of it was (a reply lost): a second write of a result
          // already in the inbox is refused by its fence and comes back false, which is right.
          this.#queue.unshift(...batch);
          await systemClock.sleep(Math.min(backoffCapMs, backoffMs * 2 ** failures++));
        }
      }
    } finally {
      this.#writing = false;
    }
  }
}
