/**
 * The orchestrator's queue of what happened: attempts that ended, signals, timers. One reader
 * takes items in arrival order, and waits when there is none.
 */
export class Inbox<T> {
  readonly #items: T[] = [];
  #wake: ((item: T) => void) | undefined;

  push(item: T): void {
    const wake = this.#wake;
    if (wake !== undefined) {
      this.#wake = undefined;
      wake(item);
    } else this.#items.push(item);
  }

  /** How many items are queued. */
  get size(): number {
    return this.#items.length;
  }

  /** The next item if one is queued; no promise for the common case of a busy run. */
  take(): T | undefined {
    return this.#items.shift();
  }

  /** The next item, waiting for one if the queue is empty. */
  next(): Promise<T> {
    const item = this.#items.shift();
    if (item !== undefined) return Promise.resolve(item);
    return new Promise((resolve) => {
      this.#wake = resolve;
    });
  }
}
