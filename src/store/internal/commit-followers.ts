import type { CommitFollower } from '../store.js';

/** A run's followers in this process: how many, and the commits told of it so far. */
interface Followed {
  refs: number;
  told: number;
  readonly wake: Set<() => void>;
}

/**
 * The followers of runs' commits in one process, for a store that learns of commits from
 * elsewhere (a notification, its own commit). One entry per run whatever the number of its
 * followers, so a store registers a run's watch once.
 */
export class CommitFollowers {
  readonly #runs = new Map<string, Followed>();

  /** The runs followed now. */
  get runs(): IterableIterator<string> {
    return this.#runs.keys();
  }

  /** A follower of `runId`; `first` says whether it is the run's first (to register it). */
  follow(runId: string, live: () => boolean, release: (last: boolean) => Promise<void>) {
    let run = this.#runs.get(runId);
    const first = run === undefined;
    if (run === undefined) {
      run = { refs: 0, told: 0, wake: new Set() };
      this.#runs.set(runId, run);
    }
    run.refs++;
    const followed = run;
    let closed = false;
    const follower: CommitFollower = {
      get told() {
        return followed.told;
      },
      get live() {
        return live();
      },
      next: (since, ms, signal) => {
        if (followed.told > since || signal?.aborted) return Promise.resolve();
        return new Promise<void>((resolve) => {
          const done = () => {
            clearTimeout(timer);
            signal?.removeEventListener('abort', done);
            followed.wake.delete(done);
            resolve();
          };
          const timer = setTimeout(done, ms);
          signal?.addEventListener('abort', done, { once: true });
          followed.wake.add(done);
        });
      },
      close: async () => {
        if (closed) return;
        closed = true;
        followed.refs--;
        const last = followed.refs === 0;
        if (last) this.#runs.delete(runId);
        await release(last);
      },
    };
    return { follower, first };
  }

  /** A commit of `runId` was told: its followers wake. */
  committed(runId: string): void {
    const run = this.#runs.get(runId);
    if (run === undefined) return;
    run.told++;
    for (const wake of [...run.wake]) wake();
  }

  /** Every run may have committed (notifications may have been missed): all followers wake. */
  all(): void {
    for (const runId of [...this.#runs.keys()]) this.committed(runId);
  }
}
