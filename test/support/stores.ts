import { MemoryStore, type Store } from '../../src/index.js';
import { SqliteStore } from '../../src/sqlite.js';

/** Every store a runtime behaviour must hold for: the runtime sees only the Store contract. */
export const stores: [string, () => Store][] = [
  ['memory', () => new MemoryStore()],
  ['sqlite', () => new SqliteStore({ path: ':memory:' })],
];
