import pg from 'pg';
import { afterAll, expect, it } from 'vitest';
import { describeNeeding } from './needs.js';
import {
  startThrowawayPostgres,
  type ThrowawayPostgres,
  throwawaySkipReason,
} from './throwaway-postgres.js';

// The throwaway server the restart tests use: its own directory and port, restarted at will,
// gone afterwards.

let server: ThrowawayPostgres | undefined;
afterAll(() => server?.destroy());

describeNeeding('initdb and pg_ctl', throwawaySkipReason)('a throwaway PostgreSQL', () => {
  it('starts on a port of its own, survives a restart with its data, and leaves nothing behind', async () => {
    server = await startThrowawayPostgres();
    const query = async (text: string) => {
      const client = new pg.Client({ connectionString: server!.url });
      await client.connect();
      try {
        return (await client.query(text)).rows;
      } finally {
        await client.end();
      }
    };
    await query('CREATE TABLE kept (n int); INSERT INTO kept VALUES (7)');
    const [before] = await query('SELECT pg_postmaster_start_time() AS at');
    server.restart();
    const [after] = await query('SELECT pg_postmaster_start_time() AS at');
    expect(after.at.getTime()).toBeGreaterThan(before.at.getTime());
    expect(await query('SELECT n FROM kept')).toEqual([{ n: 7 }]);
    const { dir } = server;
    server.destroy();
    const { existsSync } = await import('node:fs');
    expect(existsSync(dir)).toBe(false);
    await expect(query('SELECT 1')).rejects.toThrow();
  }, 120_000);
});
