import { afterAll, afterEach, beforeEach, expect, it } from 'vitest';
import { PostgresStore } from '../../src/postgres.js';
import { storeConformance } from '../../src/testing/index.js';
import {
  describePg,
  dropSchema,
  pgSuite,
  schemaName,
  skipReason,
  testPool,
  truncate,
} from './fixtures/postgres.js';

// The whole conformance suite on PostgreSQL: one schema for the file, emptied between tests,
// and a fresh store (on one shared pool) for each.
const schema = schemaName();
const pool = skipReason === undefined ? testPool({ max: 4 }) : undefined;

afterAll(async () => {
  if (pool === undefined) return;
  await dropSchema(pool, schema);
  await pool.end();
});

describePg('PostgresStore', () => {
  it('runs the conformance suite on a schema of its own', () => {
    expect(schema).toMatch(/^waymark_test_/);
  });
});

storeConformance(
  'PostgresStore',
  async () => {
    const store = new PostgresStore({ pool: pool!, schema });
    return {
      store,
      cleanup: async () => {
        await store.close();
        await truncate(pool!, schema);
      },
    };
  },
  { describe: pgSuite, it, beforeEach, afterEach, expect },
);
