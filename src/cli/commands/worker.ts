import { WaymarkError } from '../../error/waymark-error.js';
import { Worker, type WorkerEvent } from '../../runtime/worker/worker.js';
import { cliTelemetry } from '../cli-telemetry.js';
import { exitCode } from '../exit-code.js';
import { graphsOf } from '../graphs-of.js';
import type { Io } from '../io.js';
import { shownLocation } from '../location.js';
import { openStore, type PgStatementDeadlines, whereIs } from '../session.js';

interface WorkerFlags {
  readonly graphs: string;
  readonly concurrency: string;
  readonly leaseMs: string;
  readonly pollMs: string;
  readonly retentionSweepMs: string;
  readonly inline: boolean;
}

/**
 * `waymark worker --store <postgres://... or file.sqlite> --graphs <module or folder>`: claims the work of those
 * graphs from the store and does it until SIGTERM or Ctrl-C, then drains (lets its nodes finish
 * within a lease, gives back what is left) and exits 0.
 */
export async function worker(out: Io, flags: WorkerFlags): Promise<number> {
  const concurrency = wholeNumber(flags.concurrency, '--concurrency', 1);
  const leaseMs = wholeNumber(flags.leaseMs, '--lease-ms', 1_000);
  const pollMs = wholeNumber(flags.pollMs, '--poll-ms', 10);
  const retentionSweepMs = wholeNumber(flags.retentionSweepMs, '--retention-sweep-ms', 0);
  const graphs = await graphsOf(flags.graphs);
  // Workers may well start before the first run is enqueued: they make the schema if need be.
  // Every store the CLI opens serves workers: PostgreSQL, and a SQLite file shared by the
  // workers on this machine.
  const store = await openStore(out, 'create', deadlinesFor(leaseMs));
  const stop = new AbortController();
  const onSignal = () => stop.abort();
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  try {
    const telemetry = await cliTelemetry(out);
    const w = new Worker(store, graphs, {
      concurrency,
      leaseMs,
      pollMs,
      retentionSweepMs,
      inline: flags.inline,
      onEvent: (event) => tell(out, event),
      ...(telemetry !== undefined && { telemetry }),
    });
    const names = graphs.map((g) => `${g.name} (${g.hash.slice(0, 12)})`);
    out.json({
      type: 'worker-started',
      workerId: w.id,
      store: shownLocation(out.flags.db),
      graphs: graphs.map((g) => ({ name: g.name, hash: g.hash })),
      concurrency,
    });
    out.line(
      `worker ${out.c.bold(w.id)} runs ${names.join(', ')} from ${whereIs(store as never)}, ${concurrency} at a time; SIGTERM or Ctrl-C drains it`,
    );
    await w.run(stop.signal);
    out.json({ type: 'worker-stopped', workerId: w.id });
    out.line(`worker ${w.id} drained and stopped`);
    return exitCode.succeeded;
  } finally {
    process.off('SIGTERM', onSignal);
    process.off('SIGINT', onSignal);
    await store.close();
  }
}

/**
 * The store's statement deadlines for a worker's lease: its defaults (a 3 s query timeout) fit
 * a lease above 9 s; a shorter `--lease-ms` gets deadlines within a third of it, so that every
 * statement ends before the worker would stop its work (docs/workers.md).
 */
function deadlinesFor(leaseMs: number): PgStatementDeadlines {
  if (leaseMs > 9_000) return {};
  const queryTimeoutMs = Math.max(100, Math.floor(leaseMs / 3) - 50);
  return { queryTimeoutMs, statementTimeoutMs: Math.max(50, queryTimeoutMs - 100) };
}

function tell(out: Io, event: WorkerEvent): void {
  switch (event.type) {
    case 'folded':
      out.json({
        type: 'worker-folded',
        runId: event.runId,
        committed: event.committed,
        status: event.status,
      });
      if (out.flags.verbose || event.status !== 'running')
        out.line(`folded ${event.runId}: ${event.committed} step(s), ${event.status}`);
      return;
    case 'task':
      out.json({
        type: 'worker-task',
        runId: event.runId,
        activation: event.activation,
        recorded: event.recorded,
      });
      if (out.flags.verbose) out.line(`ran ${event.runId} ${event.activation}`);
      return;
    case 'lost':
      out.json({
        type: 'worker-lost',
        runId: event.runId,
        ...(event.activation !== undefined && { activation: event.activation }),
      });
      out.line(
        `lost ${event.runId}${event.activation === undefined ? '' : ` ${event.activation}`}: another worker has it now`,
      );
      return;
    case 'error': {
      const error = event.error as { code?: unknown; message?: unknown };
      const code = typeof error?.code === 'string' ? error.code : 'INTERNAL';
      const message = String(error?.message ?? event.error);
      out.json({ type: 'worker-error', code, message });
      out.error(`error ${code}: ${message} (the worker goes on)`);
      return;
    }
  }
}

function wholeNumber(text: string, option: string, least: number): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n < least) {
    throw new WaymarkError(
      'USAGE_INVALID',
      `${option} ${text} must be a whole number >= ${least}`,
      {
        retryable: false,
      },
    );
  }
  return n;
}
