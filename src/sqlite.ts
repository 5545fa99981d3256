// The public surface of `waymark/sqlite`: the embedded SQLite store. It is its own entry so that
// better-sqlite3 loads only for those who import it; `waymark` itself never does.

export type { SqliteSettings, SqliteStoreOptions } from './store/sqlite-store.js';
export { defaultSqlitePath, SqliteStore } from './store/sqlite-store.js';
