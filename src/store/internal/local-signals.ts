import type { WorkKind } from '../work-queue.js';

/**
 * News of work as this process hears it: counts per kind, and who waits for which kind. The
 * memory store and a SQLite store tell it their own writes; the PostgreSQL store tells it what its
 * LISTEN connection hears. Waiters wake on the next notification, or after their `ms`, or when
 * their signal aborts.
 */
export class LocalSignals {
  readonly #waiting = new Map<() => void, WorkKind | undefined>();
  readonly #told: Record<WorkKind, number> = { runs: 0, tasks: 0 };

  notifiedOf(kind: WorkKind): number {
    return this.#told[kind];
  }

  tell(kind: WorkKind): void {
    this.#told[kind]++;
    for (const [wake, wants] of [...this.#waiting])
      if (wants === undefined || wants === kind) wake();
  }

  wait(ms: number, signal: AbortSignal, since?: number, kind?: WorkKind): Promise<void> {
    if (signal.aborted) return Promise.resolve();
    const seen = kind === undefined ? this.#told.runs + this.#told.tasks : this.#told[kind];
    if (since !== undefined && seen > since) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        this.#waiting.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      signal.addEventListener('abort', done, { once: true });
      this.#waiting.set(done, kind);
    });
  }

  /** Wakes every waiter (the store closes). */
  wakeAll(): void {
    for (const wake of [...this.#waiting.keys()]) wake();
  }
}
