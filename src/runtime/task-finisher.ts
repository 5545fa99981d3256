import type { ClaimedTask, FinishedTask, WorkQueue } from '../store/store.js';

interface Waiting extends FinishedTask {
  readonly resolve: (held: boolean) => void;
  readonly reject: (error: unknown) => void;
}

/** Most results one statement carries: a bound on its size, not a batching delay. */
const maxBatch = 500;

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

  /** Writes the task's result; false when its lease was lost (nothing was written for it). */
  finish(task: ClaimedTask, attempt: string, at: number): Promise<boolean> {
    return new Promise((resolve, reject) => {
      this.#queue.push({ task, attempt, at, resolve, reject });
      if (this.#writing) return;
      this.#writing = true;
      setImmediate(() => void this.#write());
    });
  }

  async #write(): Promise<void> {
    try {
      while (this.#queue.length > 0) {
        const batch = this.#queue.splice(0, maxBatch);
        try {
          const held = await this.#store.finishTasks(batch, { wake: this.#wake() });
          for (const [i, w] of batch.entries()) w.resolve(held[i] === true);
        } catch (error) {
          for (const w of batch) w.reject(error);
        }
      }
    } finally {
      this.#writing = false;
    }
  }
}
