import type pg from 'pg';

// How the store's own connections plan. Every statement the store runs is a walk of an index
// by key (a run's id, a claim's order, a batch's ids), and its plan is cached per connection.
// PostgreSQL picks plans from table statistics, and a table that is new, truncated or grew
// fast since autovacuum last analyzed it (up to a minute, autovacuum_naptime) has none that
// fit: the cached plan of a claim then sorted every live run to take 8 (15 ms at 20,000), read
// the events table from end to end, and a commit scanned every run. These settings take the
// scans and sorts off the planner's list unless nothing else can answer, so the plan is the
// index walk whatever the statistics say. JIT is off because the penalty they add to a plan's
// cost (not a ban) would pass jit_above_cost and compile a 0.1 ms statement for 500 ms; none
// of these statements is long enough to gain from it.

/** The SET statements a connection of the store's own pool runs before anything else. */
export const plannerSettings = [
  'jit = off',
  'enable_seqscan = off',
  'enable_bitmapscan = off',
  'enable_sort = off',
  'enable_hashjoin = off',
  'enable_mergejoin = off',
]
  .map((setting) => `SET ${setting};`)
  .join(' ');

/**
 * The pool option that makes every connection of a pool the store creates plan as
 * {@link plannerSettings} says, before the pool hands it out. node-postgres's pool waits for
 * it (pg-pool 3.13, what pg 8.20 and later install; an older one ignores it, and the plans are
 * the planner's own); if it fails, the connection is dropped and the call fails as a failed
 * connect does.
 */
export const tunedConnections: Pick<pg.PoolConfig, 'onConnect'> = {
  onConnect: async (client) => {
    await client.query(plannerSettings);
  },
};
