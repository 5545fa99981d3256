// Deleting runs on PostgreSQL (RunRemoval in run-removal.ts): one transaction per run, on a
// connection of its own, that locks the run's row, checks, and deletes every table of pgOwned.

import type { DeletedRun, DeleteOptions } from '../../run-removal.js';
import { noSuchRun, removalRefusal } from '../../run-removal.js';
import type { StoredStatus } from '../../store.js';
import { unavailable } from '../pg-errors.js';
import { pgOwned, retentionTexts } from '../pg-retention-sql.js';
import type { PgConnection } from './connection.js';

/**
 * Deletes the run and everything it owns in one transaction, or refuses and deletes nothing.
 *
 * @example
 * await deleteRun(db, 'r1', { force: true });
 */
export async function deleteRun(
  db: PgConnection,
  runId: string,
  options?: DeleteOptions,
): Promise<DeletedRun> {
  await db.ready();
  const texts = retentionTexts(db.quoted);
  const client = await db.pool.connect().catch((error: unknown) => {
    throw unavailable(db.schema, error);
  });
  // An error event on a checked-out client (its backend was terminated) must not crash the
  // process: the query in flight rejects with it.
  const ignore = () => {};
  client.on('error', ignore);
  let broken: Error | undefined;
  try {
    await client.query('BEGIN');
    try {
      const { rows } = await client.query(texts.lockRun, [runId]);
      const run = rows[0] as
        | {
            id: string;
            graph: string;
            status: StoredStatus;
            created_at: number;
            lease_live: boolean;
          }
        | undefined;
      if (run === undefined) throw noSuchRun(runId);
      const task = await client.query(texts.liveTask, [runId]);
      const referrers = await client.query(texts.referrers, [runId]);
      const refused = removalRefusal(
        {
          runId,
          status: run.status,
          leaseLive: run.lease_live,
          taskLive: task.rows[0]?.live === true,
          referrers: referrers.rows.map((r) => r.id as string),
        },
        options,
      );
      if (refused) throw refused;
      for (const text of Object.values(pgOwned)) await client.query(text(db.quoted), [runId]);
      await client.query('COMMIT');
      return {
        id: run.id,
        graph: run.graph,
        status: run.status,
        createdAt: Number(run.created_at),
      };
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {});
      throw error;
    }
  } catch (error) {
    const failure = unavailable(db.schema, error);
    if (failure.code === 'STORE_UNAVAILABLE') broken = error as Error;
    throw failure;
  } finally {
    client.off('error', ignore);
    client.release(broken);
  }
}
