import { type Commit, MemoryStore, type Store } from '../../src/index.js';
import { SqliteStore } from '../../src/sqlite.js';

/** Every store a runtime behaviour must hold for: the runtime sees only the Store contract. */
export const stores: [string, () => Store][] = [
  ['memory', () => new MemoryStore()],
  ['sqlite', () => new SqliteStore({ path: ':memory:' })],
];

/**
 * A store that dies (rejects every commit) from the given sequence number on: a crash of the
 * process driving the run, as far as the store can tell.
 */
export function dyingAt(store: Store, seq: number): Store {
  return new Proxy(store, {
    get(target, key, receiver) {
      if (key === 'commit') {
        return async (runId: string, commit: Commit) => {
          if (commit.seq >= seq) throw new Error('the process died');
          return target.commit(runId, commit);
        };
      }
      // A fold's steps committed as one group die with it, all or none.
      if (key === 'commitAll' && 'commitAll' in target) {
        return async (runId: string, commits: readonly Commit[]) => {
          if (commits.some((commit) => commit.seq >= seq)) throw new Error('the process died');
          return (target as MemoryStore).commitAll(runId, commits);
        };
      }
      const value = Reflect.get(target, key, receiver);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}
