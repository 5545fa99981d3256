import type { ErrorCause, ErrorValue } from '../../error/error-value.js';
import { storedJson } from '../../error/store-corrupt.js';
import { WaymarkError } from '../../error/waymark-error.js';
import { withoutSlots } from '../../graph/subgraph.js';
import type { Snapshot } from '../../runtime/core/snapshot.js';
import type { Driver } from '../../runtime/ops/drivers.js';
import { loadTrace } from '../../runtime/ops/history.js';
import type { Trace } from '../../runtime/watch/trace.js';
import type { RunRecord, WaitRecord } from '../../store/store.js';
import { exitCode } from '../exit-code.js';
import type { Io } from '../io.js';
import { driversOf, isDriven, leaseJson, ownerLine, statusLabel } from '../liveness.js';
import { queuedText, queuedViews } from '../queued.js';
import { waitView } from '../report.js';
import type { CliStore } from '../session.js';
import { graphFileOf, graphOfRun, withRunStore } from '../session.js';
import { sleepViews } from '../sleeps.js';
import { readStoredRun } from '../stored-run.js';
import { iso } from '../time.js';

interface RunView {
  readonly run: RunRecord;
  readonly snapshot: Snapshot;
  readonly waits: readonly WaitRecord[];
  readonly trace: Trace;
  readonly driver: Driver;
  /**
   * Set when the view is the run's last checkpoint, with events after it that only its graph
   * can replay, and no graph file known: how many, and the checkpoint's seq.
   */
  readonly asOf?: { readonly seq: number; readonly laterEvents: number };
}

/** `waymark show <run-id>`: how the run stands, from its last checkpoint when that is current. */
export async function show(
  out: Io,
  runId: string,
  flags: { readonly graph?: string; readonly at?: string; readonly diff?: boolean },
): Promise<number> {
  if (flags.at !== undefined) {
    const { showAt } = await import('./show-at.js');
    return showAt(out, runId, { ...flags, at: flags.at });
  }
  if (flags.diff === true) {
    throw new WaymarkError(
      'USAGE_INVALID',
      '--diff compares a step with the one before it: give --at <seq> too',
      {
        retryable: false,
      },
    );
  }
  const view = await withRunStore(out, runId, async (store) => {
    const read = await readView(out, store, runId, flags);
    return { ...read, queued: (await queuedViews(store, [read.run])).get(runId) };
  });
  const { run, snapshot, waits, queued } = view;
  const open = waits.filter((w) => w.answer === null && w.closedAt == null).map(waitView);
  const answered = waits
    .filter((w) => w.answer !== null)
    .map((w) => ({
      requestId: w.requestId,
      node: w.node,
      answer: storedJson(w.answer!, runId, `the answer to wait "${w.requestId}"`),
      by: w.answeredBy,
      answeredAt: iso(w.answeredAt!),
    }));
  const stopError = 'error' in snapshot ? snapshot.error : undefined;
  const beats = lastBeats(view.trace, snapshot);
  const sleeps = sleepViews(snapshot);
  const now = snapshot.graph;
  const restamped = now.hash !== run.graphHash || now.version !== run.graphVersion;
  out.json({
    type: 'run',
    runId: run.id,
    // The graph the run goes under now: a resume under a changed graph restamps its checkpoint.
    graph: { name: now.name, hash: now.hash, version: now.version },
    ...(restamped && {
      startedUnder: { name: run.graph, hash: run.graphHash, version: run.graphVersion },
    }),
    // A run queued for a slot has not started: waiting, as the store records it.
    status: queued === undefined ? snapshot.status : 'waiting',
    live: snapshot.status === 'running' && queued === undefined ? isDriven(view.driver) : null,
    ...(queued !== undefined && { queued }),
    lease: leaseJson(run.lease),
    createdAt: iso(run.createdAt),
    updatedAt: iso(run.updatedAt),
    steps: snapshot.steps,
    path: view.trace.path,
    state: withoutSlots(snapshot.state),
    pending: snapshot.pending.map((a) => a.id),
    waits: { open, answered },
    ...(sleeps.length > 0 && { sleeps }),
    errors: snapshot.errors,
    heartbeats: beats.map((b) => ({ ...b, at: iso(b.at) })),
    quarantine: snapshot.quarantine,
    spent: snapshot.spent,
    limits: snapshot.limits,
    ...(stopError && { error: stopError }),
    ...(view.asOf !== undefined && { asOf: view.asOf }),
  });
  const { c } = out;
  out.line(`run      ${c.bold(run.id)}`);
  const under = restamped
    ? `, started under v${run.graphVersion} (${run.graphHash.slice(0, 12)})`
    : '';
  out.line(`graph    ${now.name} v${now.version} (${now.hash.slice(0, 12)})${under}`);
  const shown = snapshot.status === 'running' ? statusLabel(run, view.driver) : snapshot.status;
  if (queued === undefined) out.line(`status   ${shown} after ${snapshot.steps} step(s)`);
  else out.line(`status   ${queuedText(queued)}`);
  if (view.asOf !== undefined) {
    out.line(
      `as of    its checkpoint at seq ${view.asOf.seq}: ${view.asOf.laterEvents} later event(s) are not replayed without its graph (give --graph <file>)`,
    );
  }
  const owner =
    snapshot.status === 'running' && queued === undefined ? ownerLine(run, view.driver) : undefined;
  if (owner !== undefined) out.line(`owner    ${owner}`);
  out.line(`started  ${iso(run.createdAt)}`);
  out.line(`updated  ${iso(run.updatedAt)}`);
  out.line(`path     ${view.trace.path.join(' -> ')}`);
  if (snapshot.pending.length > 0)
    out.line(`pending  ${snapshot.pending.map((a) => a.id).join(', ')}`);
  if (stopError) out.line(`stopped  ${c.red(`${stopError.code}: ${stopError.message}`)}`);
  for (const w of open) {
    const closes = w.closesAt === undefined ? '' : `, closes at ${w.closesAt}`;
    out.line(`waiting  ${w.node} asks "${w.prompt}" (request ${w.requestId}${closes})`);
    out.line(`         answer schema: ${JSON.stringify(w.schema)}`);
  }
  for (const z of sleeps) {
    if (z.rateLimited === undefined) out.line(`sleeping ${z.activation} until ${z.until}`);
    else out.line(`queued ${z.activation} for rate limit "${z.rateLimited}" until ${z.until}`);
  }
  for (const a of answered) {
    out.line(`answered ${a.node} by ${a.by}: ${JSON.stringify(a.answer)}`);
  }
  for (const b of beats) {
    const details = b.details === undefined ? '' : `: ${JSON.stringify(b.details)}`;
    out.line(`heartbeat ${b.activation} attempt ${b.attempt} at ${iso(b.at)}${details}`);
  }
  out.line(`errors   ${snapshot.errors.length === 0 ? 'none' : `${snapshot.errors.length}`}`);
  for (const e of snapshot.errors) {
    out.line(`  ${e.activation} attempt ${e.attempt}: ${e.code} (${e.class}) ${e.message}`);
    for (const line of provenanceLines(e, out.flags.verbose)) out.line(`    ${line}`);
  }
  const { spent, quarantine } = snapshot;
  if (snapshot.limits.model !== undefined) out.line(`model    ${snapshot.limits.model}`);
  if (snapshot.limits.context !== undefined)
    out.line(`context  ${JSON.stringify(snapshot.limits.context)}`);
  if (spent.inputTokens + spent.outputTokens > 0) {
    const cost = spent.costUsd > 0 ? `, $${spent.costUsd.toFixed(4)}` : '';
    out.line(`spent    ${spent.inputTokens} in / ${spent.outputTokens} out tokens${cost}`);
  }
  out.line(`quarantine ${quarantine.length === 0 ? 'none' : `${quarantine.length} output(s)`}`);
  for (const q of quarantine) {
    out.line(`  ${q.activation}: ${q.reasons.join(', ')}: ${JSON.stringify(q.output)}`);
  }
  out.line('state');
  for (const line of JSON.stringify(withoutSlots(snapshot.state), null, 2).split('\n'))
    out.line(`  ${line}`);
  return exitCode.succeeded;
}

/**
 * The last heartbeat of each activation the run still has to run (its latest attempt's, from
 * the trace): where a node that timed out, failed or was interrupted had got to. Attempts
 * running now are not in the trace; their heartbeats are told live on the run's stream.
 */
function lastBeats(
  trace: Trace,
  snapshot: Snapshot,
): { activation: string; attempt: number; at: number; details?: unknown }[] {
  const pending = new Set(snapshot.pending.map((a) => a.id));
  const latest = new Map<string, Trace['entries'][number]>();
  for (const entry of trace.entries) {
    if (!pending.has(entry.activation)) continue;
    const before = latest.get(entry.activation);
    if (before === undefined || before.attempt <= entry.attempt)
      latest.set(entry.activation, entry);
  }
  return [...latest.values()].flatMap((e) =>
    e.heartbeat === undefined
      ? []
      : [
          {
            activation: e.activation,
            attempt: e.attempt,
            at: e.heartbeat.at,
            ...(e.heartbeat.details !== undefined && { details: e.heartbeat.details }),
          },
        ],
  );
}

/**
 * The run as it stands: from its last checkpoint when that is current (no graph file, tsx or
 * runtime loaded), else replayed through its graph.
 */
async function readView(
  io: Io,
  store: CliStore,
  runId: string,
  flags: { graph?: string },
): Promise<RunView> {
  const file = await graphFileOf(io, store, runId, flags.graph);
  const stored = await readStoredRun(store, runId);
  // Without a graph file (a run a library or another server started), the last checkpoint is
  // what can be shown: the events after it are told, not replayed.
  if (stored.snapshot !== undefined || file === undefined) {
    const run = stored.loaded.run;
    const asOf =
      stored.snapshot === undefined
        ? { seq: stored.loaded.snapshot.seq, laterEvents: stored.loaded.events.length }
        : undefined;
    const [waits, trace, drivers] = await Promise.all([
      store.listWaits(runId),
      loadTrace(store, runId),
      driversOf(store, [run]),
    ]);
    return {
      run,
      snapshot: stored.checkpoint,
      waits,
      trace,
      driver: driverIn(drivers, runId),
      ...(asOf !== undefined && { asOf }),
    };
  }
  const graph = await graphOfRun(io, store, runId, flags.graph);
  const { inspect } = await import('../../runtime/ops/inspect.js');
  const view = await inspect(store, graph, runId);
  const drivers = await driversOf(store, [view.run]);
  return { ...view, driver: driverIn(drivers, runId) };
}

function driverIn(drivers: ReadonlyMap<string, Driver>, runId: string): Driver {
  return drivers.get(runId) ?? { kind: 'nobody' };
}

/**
 * Where a node's error came from: the cause chain, one line per link, and with --verbose the
 * stack trace of what it threw (and of each cause).
 *
 * @example
 * provenanceLines(error, false); // ['caused by: ECONNRESET: socket hang up']
 */
export function provenanceLines(
  error: Pick<ErrorValue, 'stack' | 'cause'>,
  verbose: boolean,
): string[] {
  const lines: string[] = [];
  if (verbose && error.stack !== undefined) lines.push(...error.stack.split('\n'));
  for (let cause: ErrorCause | undefined = error.cause; cause !== undefined; cause = cause.cause) {
    lines.push(`caused by: ${cause.code === undefined ? '' : `${cause.code}: `}${cause.message}`);
    if (verbose && cause.stack !== undefined) lines.push(...cause.stack.split('\n').slice(1));
  }
  return lines;
}
