import { WaymarkError } from '../../error/waymark-error.js';
import type { Driver } from '../../runtime/ops/drivers.js';
import { threadLabel } from '../../runtime/ops/labels.js';
import {
  type RunRecord,
  type StoredStatus,
  storedStatuses,
  type WorkerRecord,
} from '../../store/store.js';
import { exitCode } from '../exit-code.js';
import type { Io } from '../io.js';
import { driversOf, isDriven, leaseJson, statusLabel } from '../liveness.js';
import { isPostgres, shownLocation } from '../location.js';
import { queuedText, queuedViews } from '../queued.js';
import { type CliStore, locationOf, noDatabase, withExistingStore } from '../session.js';
import { iso } from '../time.js';

const statuses: readonly StoredStatus[] = storedStatuses;

/** `waymark ls`: the runs in the database, newest first. Never creates a database. */
export async function ls(
  out: Io,
  flags: {
    readonly status?: string;
    readonly graph?: string;
    readonly thread?: string;
    readonly limit: string;
  },
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
  const db = locationOf(out);
  const found = await withExistingStore(out, async (store) => {
    const filter = {
      ...(status !== undefined && { status: status as StoredStatus }),
      ...(flags.graph !== undefined && { graph: flags.graph }),
      limit,
    };
    const listed =
      flags.thread === undefined
        ? await store.listRuns(filter)
        : await threadRuns(store, flags.thread, filter);
    // A store that serves workers knows which graphs some live worker runs. A SQLite file no
    // worker ever registered in has its runs driven by the commands that run them.
    const workers = await store.listWorkers();
    const inProcess = workers.length === 0 && !isPostgres(out.flags.db);
    const drivers = await driversOf(store, listed);
    const queued = await queuedViews(store, listed);
    return { runs: listed, served: inProcess ? undefined : servedGraphs(workers), drivers, queued };
  });
  // Listing never creates a database. A location the command was given that holds none is
  // mistyped; the default one simply has no runs yet.
  if (found === undefined) {
    if (out.dbGiven) {
      const option = isPostgres(out.flags.db) ? '--store' : '--db';
      throw new WaymarkError(
        'USAGE_INVALID',
        `${option} ${shownLocation(out.flags.db)}: there is ${noDatabase(out)}`,
        { retryable: false, details: { reason: 'no-database', path: db } },
      );
    }
    out.json({ type: 'runs', db, runs: [] });
    out.line(`no runs (${noDatabase(out)} yet)`);
    return exitCode.succeeded;
  }
  const { runs, served, drivers, queued } = found.value;
  const driver = (r: RunRecord): Driver => drivers.get(r.id) ?? { kind: 'nobody' };
  const unserved = (r: RunRecord) =>
    served !== undefined &&
    (r.status === 'running' || r.status === 'waiting') &&
    !(r.status === 'running' && isDriven(driver(r))) &&
    !served.has(`${r.graph}@${r.graphHash}`);
  out.json({
    type: 'runs',
    db,
    runs: runs.map((r) => ({
      ...summary(r, driver(r)),
      ...(unserved(r) && { unserved: true }),
      ...(queued.has(r.id) && { queued: queued.get(r.id) }),
    })),
  });
  if (runs.length === 0) out.line('no runs');
  for (const r of runs) {
    const waitsFor = queued.get(r.id);
    const note = unserved(r)
      ? `  (no live worker runs graph ${r.graph} ${r.graphHash.slice(0, 12)})`
      : waitsFor === undefined
        ? ''
        : `  (${queuedText(waitsFor)})`;
    const label = waitsFor === undefined ? statusLabel(r, driver(r)) : 'queued';
    out.line(
      `${r.id}  ${label.padEnd(11)}  ${r.graph.padEnd(16)}  ${String(r.seq).padStart(5)} events  ${iso(r.updatedAt)}${note}`,
    );
  }
  return exitCode.succeeded;
}

/** The graphs (name@hash) some live worker runs. */
function servedGraphs(workers: readonly WorkerRecord[]): Set<string> {
  return new Set(
    workers.filter((w) => w.live).flatMap((w) => w.graphs.map((g) => `${g.name}@${g.hash}`)),
  );
}

/** A run as `ls --json` lists it. */
function summary(r: RunRecord, driver: Driver) {
  return {
    runId: r.id,
    graph: r.graph,
    status: r.status,
    // A running run nobody moves on is interrupted: its process is gone, no worker takes it up.
    live: r.status === 'running' ? isDriven(driver) : null,
    lease: leaseJson(r.lease),
    seq: r.seq,
    createdAt: iso(r.createdAt),
    updatedAt: iso(r.updatedAt),
  };
}

/**
 * The runs of a thread, newest first: those labelled with it, and its first run (whose id the
 * thread's is, and which carries no label of it), when the filter keeps it and there is room.
 */
async function threadRuns(
  store: CliStore,
  thread: string,
  filter: { readonly status?: StoredStatus; readonly graph?: string; readonly limit: number },
): Promise<RunRecord[]> {
  const later = await store.listRuns({ ...filter, labels: { [threadLabel]: thread } });
  const first = await store.getRun(thread);
  const kept =
    first !== undefined &&
    (filter.status === undefined || first.status === filter.status) &&
    (filter.graph === undefined || first.graph === filter.graph) &&
    later.length < filter.limit;
  return kept ? [...later, first] : later;
}
