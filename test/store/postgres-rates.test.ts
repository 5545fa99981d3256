import pg from 'pg';
import { afterAll, expect, it } from 'vitest';
import { PostgresStore } from '../../src/postgres.js';
import { RATE_WINDOW_MS } from '../../src/store/rates.js';
import { describePg, dropSchema, pgUrl, schemaName, skipReason } from './fixtures/postgres.js';

// Rate limits across workers: two stores, each with its own pool, as two worker processes on
// one schema are. The conformance suite's race shares one pool; here nothing is shared but the
// database, so only the advisory lock keeps the count.

const schema = schemaName();

afterAll(async () => {
  if (skipReason !== undefined) return;
  const pool = new pg.Pool({ connectionString: pgUrl });
  await dropSchema(pool, schema);
  await pool.end();
});

describePg('rate limits on PostgreSQL, across workers', () => {
  it('two workers racing 40 admissions to a resource with room for 7 admit exactly 7', async () => {
    const one = await PostgresStore.open({ connectionString: pgUrl, schema, poolSize: 8 });
    const two = await PostgresStore.open({ connectionString: pgUrl, schema, poolSize: 8 });
    try {
      const at = 1_000_000;
      const decisions = await Promise.all(
        Array.from({ length: 40 }, (_, i) =>
          (i % 2 === 0 ? one : two).admitRate({
            resource: 'openai',
            id: `w${i % 2}/r${i}`,
            at: at + (i % 5),
            requestsPerMinute: 7,
          }),
        ),
      );
      expect(decisions.filter((d) => d.admitted)).toHaveLength(7);
      const refused = decisions.filter((d) => !d.admitted);
      expect(new Set(refused.map((d) => d.reason))).toEqual(new Set(['requests']));
      // Each refusal names when the oldest admission that counts leaves the window.
      const untils = refused.map((d) => (d.admitted ? 0 : d.until));
      expect(Math.min(...untils)).toBeGreaterThanOrEqual(at + RATE_WINDOW_MS);
      expect(await one.rateWindow('openai', at + 4)).toEqual({
        resource: 'openai',
        requests: 7,
        tokens: 0,
      });
      expect(await two.rateWindow('openai', at + 4)).toMatchObject({ requests: 7 });
    } finally {
      await one.close();
      await two.close();
    }
  });
});
