import pg from 'pg';

// The machine's PostgreSQL server (WAYMARK_PG_URL) is shared: by every test file, and on a
// developer's box or a CI runner by everything else there. No test stops, restarts or
// reconfigures it; its start time is how the suite checks that none did.

/** The machine's server, as the PostgreSQL tests use it. */
export const machinePgUrl = process.env.WAYMARK_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** `pg_postmaster_start_time()` of the machine's server in ms, or undefined when it is unreachable. */
export async function machineStartedAt(): Promise<number | undefined> {
  const client = new pg.Client({ connectionString: machinePgUrl, connectionTimeoutMillis: 3_000 });
  client.on('error', () => {});
  try {
    await client.connect();
    const { rows } = await client.query('SELECT pg_postmaster_start_time() AS at');
    return (rows[0].at as Date).getTime();
  } catch {
    return undefined;
  } finally {
    await client.end().catch(() => {});
  }
}
