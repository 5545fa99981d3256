// A run whose fold keeps failing (damaged data, a graph that throws while it is folded) must not
// be claimed again at once, in a loop, forever: each failure is counted on the run's row and
// keeps the run's lease for the back-off, so no claim takes it before then; past the limit the
// worker ends it as failed, without reading what it cannot read.

/** Migration 8: the count of a run's failed folds. Not in any index: a commit stays HOT. */
export function foldFailuresMigration(s: string): string {
  return `ALTER TABLE ${s}.runs ADD COLUMN fold_failures integer NOT NULL DEFAULT 0;`;
}

const nowMs = 'floor(extract(epoch FROM statement_timestamp()) * 1000)::bigint';

/** The statements of {@link WorkQueue.foldFailed} and {@link WorkQueue.failRun}. */
export function foldFailureTexts(s: string) {
  return {
    // $1 run, $2 epoch, $3 owner, $4 back-off ms: the lease is kept (not released) until then.
    foldFailed: `UPDATE ${s}.runs SET fold_failures = fold_failures + 1,
        lease_expires_at = ${nowMs} + ceil($4::double precision)::bigint
      WHERE id = $1 AND lease_epoch = $2 AND lease_owner = $3
        AND status IN ('running', 'waiting')
      RETURNING fold_failures`,
    // $1 run, $2 epoch, $3 owner, $4 error JSON, $5 at. Its queued work goes with it: nothing
    // would ever fold the results of its tasks, nor its timers.
    failRun: `WITH run AS (
        UPDATE ${s}.runs SET status = 'failed', error = $4, updated_at = $5, lease_expires_at = 0
        WHERE id = $1 AND lease_epoch = $2 AND lease_owner = $3
          AND status IN ('running', 'waiting')
        RETURNING id),
      tasks AS (DELETE FROM ${s}.tasks t USING run WHERE t.run_id = run.id),
      timers AS (DELETE FROM ${s}.timers t USING run WHERE t.run_id = run.id),
      inbox AS (DELETE FROM ${s}.inbox i USING run WHERE i.run_id = run.id)
      SELECT id FROM run`,
  };
}
