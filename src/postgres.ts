// The public surface of `waymark/postgres`: the PostgreSQL store. It is its own entry so that
// node-postgres loads only for those who import it; `waymark` itself never does.

export type { PostgresStoreOptions } from './store/postgres-store.js';
export { defaultPostgresSchema, PostgresStore } from './store/postgres-store.js';
