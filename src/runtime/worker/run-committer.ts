import { isWaymarkError } from '../../error/waymark-error.js';
import { type Commit, isPlainGroup, type RunGroup } from '../../store/store.js';
import type { WorkQueue } from '../../store/work-queue.js';

interface Waiting extends RunGroup {
  readonly resolve: () => void;
  readonly reject: (error: unknown) => void;
}

/** Most runs one statement carries: a bound on its size, not a batching delay. */
const maxBatch = 200;
/** Statements of plain groups in flight at once: one more while one is on the wire. */
const maxWriters = 2;

/**
 * A worker's writer of its runs' commits: the plain commits (head, events, snapshot, inbox: a
 * held run's node, most folds) of runs that stepped together go to the store in one statement
 * (`commitRuns`) rather than one each, each run still fenced on its own. It waits for nothing:
 * a commit is written in the loop turn after it is asked for, with those asked for in the same
 * turn or while the statements before were in flight. A group that did not hold is committed
 * again alone (`commitAll`), which says why; anything else goes to `commitAll` at once.
 *
 * @example
 * const committer = new RunCommitter(store);
 * await journal.recordAll(committer, steps, true);
 */
export class RunCommitter {
  readonly #store: Pick<WorkQueue, 'commitAll' | 'commitRuns'>;
  readonly #queue: Waiting[] = [];
  #writers = 0;
  #scheduled = false;

  constructor(store: Pick<WorkQueue, 'commitAll' | 'commitRuns'>) {
    this.#store = store;
  }

  /** Commits one run's consecutive steps, as `WorkQueue.commitAll` does, with others if it can. */
  readonly commitAll = (runId: string, commits: readonly Commit[]): Promise<void> => {
    if (commits.length === 0) return Promise.resolve();
    if (!isPlainGroup(commits)) return this.#store.commitAll(runId, commits);
    return new Promise((resolve, reject) => {
      this.#queue.push({ runId, commits, resolve, reject });
      this.#schedule();
    });
  };

  #schedule(): void {
    if (this.#scheduled || this.#writers >= maxWriters) return;
    this.#scheduled = true;
    setImmediate(() => {
      this.#scheduled = false;
      if (this.#queue.length > 0) void this.#write();
    });
  }

  async #write(): Promise<void> {
    this.#writers++;
    try {
      while (this.#queue.length > 0) {
        const batch = this.#queue.splice(0, maxBatch);
        if (batch.length === 1) {
          const [only] = batch;
          await this.#store.commitAll(only!.runId, only!.commits).then(only!.resolve, only!.reject);
          continue;
        }
        let held: boolean[];
        try {
          held = await this.#store.commitRuns(batch);
        } catch (error) {
          // A statement that failed as a whole (a damaged run's rows in the way, say) wrote
          // nothing: each run is committed alone, and meets its own error. A store that cannot
          // be reached fails them all, as each one's commit would have.
          if (isWaymarkError(error) && error.code === 'STORE_UNAVAILABLE') {
            for (const w of batch) w.reject(error);
            continue;
          }
          held = batch.map(() => false);
        }
        await Promise.all(
          batch.map((w, i) =>
            held[i] === true
              ? w.resolve()
              : this.#store.commitAll(w.runId, w.commits).then(w.resolve, w.reject),
          ),
        );
      }
    } finally {
      this.#writers--;
      if (this.#queue.length > 0) this.#schedule();
    }
  }
}
