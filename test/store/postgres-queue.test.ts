import { afterAll, afterEach, beforeEach, expect, it } from 'vitest';
import { PostgresStore } from '../../src/postgres.js';
import { workQueueConformance } from '../../src/testing/index.js';
import {
  dropSchema,
  pgSuite,
  schemaName,
  skipReason,
  testPool,
  truncate,
} from './fixtures/postgres.js';

// The work queue conformance suite on PostgreSQL: one schema for the file, emptied between
// tests; the second store has a pool of its own, as another worker's process would.
const schema = schemaName();
const pool = skipReason === undefined ? testPool({ max: 4 }) : undefined;
const otherPool = skipReason === undefined ? testPool({ max: 4 }) : undefined;

afterAll(async () => {
  if (pool === undefined) return;
  await dropSchema(pool, schema);
  await pool.end();
  await otherPool?.end();
});

workQueueConformance(
  'PostgresStore',
  async () => {
    const store = new PostgresStore({ pool: pool!, schema });
    const other = new PostgresStore({ pool: otherPool!, schema });
    return {
      store,
      other,
      cleanup: async () => {
        await store.close();
        await other.close();
        await truncate(pool!, schema);
      },
    };
  },
  { describe: pgSuite, it, beforeEach, afterEach, expect },
);
