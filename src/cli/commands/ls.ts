import { resolve } from 'node:path';
import { WaymarkError } from '../../error/waymark-error.js';
import { type RunRecord, type StoredStatus, storedStatuses } from '../../store/store.js';
import { exitCode } from '../exit-code.js';
import type { Io } from '../io.js';
import { isDriven, leaseJson, statusLabel } from '../liveness.js';
import { databaseExists, withStore } from '../session.js';
import { iso } from '../time.js';

const statuses: readonly StoredStatus[] = storedStatuses;

/** `waymark ls`: the runs in the database, newest first. Never creates a database. */
export async function ls(
  out: Io,
  flags: { readonly status?: string; readonly graph?: string; readonly limit: string },
): Promise<number> {
  const status = flags.status;
  if (status !== undefined && !statuses.includes(status as StoredStatus)) {
    throw new WaymarkError(
      'USAGE_INVALID',
      `--status ${status} is not a run status; use one of ${statuses.join(', ')}`,
      { retryable: false },
    );
  }
  const limit = Number(flags.limit);
  if (!Number.isInteger(limit) || limit < 1) {
    throw new WaymarkError('USAGE_INVALID', `--limit ${flags.limit} must be a whole number >= 1`, {
      retryable: false,
    });
  }
  const db = resolve(out.flags.db);
  // Listing never creates a database. A --db that names no file is a mistyped path; the
  // default one simply has no runs yet.
  if (!databaseExists(out)) {
    if (out.dbGiven) {
      throw new WaymarkError(
        'USAGE_INVALID',
        `--db ${out.flags.db}: there is no database at ${db}`,
        {
          retryable: false,
          details: { reason: 'no-database', path: db },
        },
      );
    }
    out.json({ type: 'runs', db, runs: [] });
    out.line(`no runs (no database at ${db} yet)`);
    return exitCode.succeeded;
  }
  const runs = await withStore(out, 'existing', (store) =>
    store.listRuns({
      ...(status !== undefined && { status: status as StoredStatus }),
      ...(flags.graph !== undefined && { graph: flags.graph }),
      limit,
    }),
  );
  out.json({ type: 'runs', db, runs: runs.map(summary) });
  if (runs.length === 0) out.line('no runs');
  for (const r of runs) {
    out.line(
      `${r.id}  ${statusLabel(r).padEnd(11)}  ${r.graph.padEnd(16)}  ${String(r.seq).padStart(5)} events  ${iso(r.updatedAt)}`,
    );
  }
  return exitCode.succeeded;
}

/** A run as `ls --json` lists it. */
function summary(r: RunRecord) {
  return {
    runId: r.id,
    graph: r.graph,
    status: r.status,
    // A running run nobody drives is interrupted: its process is gone.
    live: r.status === 'running' ? isDriven(r) : null,
    lease: leaseJson(r.lease),
    seq: r.seq,
    createdAt: iso(r.createdAt),
    updatedAt: iso(r.updatedAt),
  };
}
