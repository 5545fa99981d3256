import { storedJson } from '../error/store-corrupt.js';
import type { CompiledGraph } from '../graph/compiled.js';
import type { Snapshot } from '../runtime/core/snapshot.js';
import { dueAt, type WaitRequest } from '../runtime/engine/waits.js';
import { loadTrace } from '../runtime/ops/history.js';
import type { RunResult } from '../runtime/run-types.js';
import type { WaitRecord } from '../store/store.js';
import { exitCodeOf } from './exit-code.js';
import type { Io } from './io.js';
import { commandLine, resumability, whatWorks } from './next.js';
import { type CliStore, locationOf, whereIs } from './session.js';
import { readStoredRun } from './stored-run.js';
import { iso } from './time.js';

/** An open wait as the CLI shows it. */
export interface OpenWaitView {
  readonly requestId: string;
  readonly node: string;
  readonly prompt: string;
  readonly schema: unknown;
  readonly openedAt: string;
  /** When it closes unanswered (its `timeoutMs` or `deadline`), if it has a deadline. */
  readonly closesAt?: string;
}

/**
 * What a wait asks, read from its stored request.
 * @throws WaymarkError `STORE_CORRUPT` when the stored request is not JSON.
 */
export function waitView(wait: WaitRecord): OpenWaitView {
  const request = storedJson(
    wait.request,
    wait.runId,
    `the request of its wait "${wait.requestId}"`,
  ) as WaitRequest;
  const closesAt = dueAt(wait.openedAt, request.timeoutMs ?? null, request.deadlineAt);
  return {
    requestId: wait.requestId,
    node: wait.node,
    prompt: request.prompt,
    schema: request.schema,
    openedAt: iso(wait.openedAt),
    ...(closesAt !== undefined && { closesAt: iso(closesAt) }),
  };
}

/**
 * How a yes-no wait takes its answer, from its stored JSON Schema: a plain boolean, an object
 * with an `approved` boolean (`note` says whether it has a `note` field), or not yes-no at all.
 */
export function yesNoShape(
  schema: unknown,
):
  | { readonly shape: 'boolean' }
  | { readonly shape: 'object'; readonly note: boolean }
  | undefined {
  const s = schema as { type?: string; properties?: Record<string, unknown> } | null;
  if (s?.type === 'boolean') return { shape: 'boolean' };
  if (s?.type === 'object' && s.properties?.approved !== undefined) {
    return { shape: 'object', note: s.properties.note !== undefined };
  }
  return undefined;
}

/** Errors a resume meets again unless the graph changes: its router decides the same way. */
const decidesAgain: ReadonlySet<string> = new Set(['ROUTE_UNDECLARED', 'ROUTER_FAILED']);

/**
 * Prints how a run stands after a command moved it (run, resume, answer, rewind): status, the
 * whole path across every process that ran it, where its checkpoints live, and the next
 * command to type. Returns the exit code for that status.
 */
export async function reportRun(io: Io, store: CliStore, result: RunResult): Promise<number> {
  const { runId, status } = result;
  const { path, entries } = await loadTrace(store, runId);
  const waits = (await store.listWaits(runId, { open: true })).map(waitView);
  const error = 'error' in result ? result.error : undefined;
  io.json({
    type: 'result',
    runId,
    status,
    steps: result.steps,
    path,
    ...(error && { error }),
    ...(status === 'waiting' && { waits }),
    ...(status === 'waiting' && result.wakesAt !== undefined && { wakesAt: iso(result.wakesAt) }),
    db: locationOf(io),
  });
  const { c } = io;
  const colour = status === 'succeeded' ? c.green : status === 'waiting' ? c.yellow : c.red;
  io.line();
  io.line(`run ${c.bold(runId)} ${colour(status)} after ${result.steps} step(s)`);
  io.line(`path:        ${path.join(' -> ')}`);
  io.line(`checkpoints: ${whereIs(store)}`);
  if (error !== undefined) {
    io.line(`error:       ${c.red(`${error.code}: ${error.message}`)} (at ${error.activation})`);
  }
  switch (status) {
    case 'waiting':
      for (const wait of waits) {
        const closes = wait.closesAt === undefined ? '' : `, closes at ${wait.closesAt}`;
        io.line(
          `waiting:     ${wait.node} asks "${firstLine(wait.prompt)}" (request ${wait.requestId}${closes})`,
        );
      }
      if (result.wakesAt !== undefined) {
        // No command to type: whoever hosts the run wakes it; a resume before then is refused.
        io.line(
          `sleeping:    until ${iso(result.wakesAt)}; a worker or waymark serve on this database wakes it then, as does a resume after it`,
        );
      }
      answerCommands(io, runId, waits).forEach((next, i) => {
        io.line(c.dim(`${i === 0 ? 'next:' : '     '}        ${next}`));
      });
      await breakpoints(io, store, runId, waits.length === 0);
      break;
    case 'failed':
    case 'timed_out': {
      const { loaded, snapshot } = await readStoredRun(store, runId);
      const verdict = snapshot === undefined ? undefined : resumability(loaded.run, snapshot);
      if (error !== undefined && decidesAgain.has(error.code)) {
        // A router is pure: resumed with the same graph it returns the same, so the resume the
        // hint names comes after the fix, never instead of it.
        const router = (error.details as { router?: string } | undefined)?.router ?? error.node;
        const file = io.about.graphFile ?? 'the graph file';
        io.line(
          c.dim(
            `next:        fix the router of "${router}" or its targets in ${file} (a resume with the graph as it is fails the same way), then:`,
          ),
        );
        io.line(c.dim(`             ${commandLine(io, ['resume', runId])}`));
        break;
      }
      if (snapshot === undefined || verdict?.resumable) {
        io.line(
          c.dim(
            `next:        ${commandLine(io, ['resume', runId])}  (only what did not complete runs again)`,
          ),
        );
        break;
      }
      io.line(c.dim(`next:        resume cannot continue this run: ${verdict?.why}. Instead:`));
      for (const next of whatWorks(io, runId, snapshot, entries)) {
        io.line(c.dim(`             ${next}`));
      }
      break;
    }
    default:
      break;
  }
  if (io.flags.quiet) io.essential(`${runId} ${status}`);
  return exitCodeOf(status);
}

/** What a breakpoint stopped (pauseBefore / pauseAfter), and, with no wait open, the resume. */
async function breakpoints(io: Io, store: CliStore, runId: string, alone: boolean): Promise<void> {
  const { snapshot } = await readStoredRun(store, runId);
  const paused = snapshot?.pending.filter((a) => a.paused === true) ?? [];
  if (paused.length === 0) return;
  io.line(
    `paused:      ${paused.map((a) => a.id).join(', ')} (a breakpoint: nothing runs them until a resume)`,
  );
  if (alone)
    io.line(
      io.c.dim(
        `next:        ${commandLine(io, ['resume', runId])}  (runs what the breakpoint stopped)`,
      ),
    );
}

/** The commands that answer a run's open waits, one per line: approve and reject for yes-no ones. */
function answerCommands(io: Io, runId: string, waits: readonly OpenWaitView[]): string[] {
  return waits.flatMap((wait) => {
    const request = waits.length > 1 ? ['--request', wait.requestId] : [];
    const yesNo = yesNoShape(wait.schema);
    if (yesNo === undefined) {
      return [commandLine(io, ['answer', runId, ...request, '--value', '<json>'])];
    }
    const note = yesNo.shape === 'object' && yesNo.note ? ['--note', '<text>'] : [];
    return [
      commandLine(io, ['approve', runId, ...request]),
      commandLine(io, ['reject', runId, ...request, ...note]),
    ];
  });
}

/**
 * Before a resume: what is read back from the checkpoints and what will run, so the output says
 * that only the unfinished steps run again.
 */
export async function explainResume(
  io: Io,
  store: CliStore,
  graph: CompiledGraph,
  runId: string,
): Promise<Snapshot> {
  const { inspect } = await import('../runtime/ops/inspect.js');
  const { run, snapshot, trace } = await inspect(store, graph, runId);
  // resume() refuses a cancelled run, or one with nothing left to run: announcing what would
  // run again would be untrue.
  if (snapshot.status !== 'succeeded' && !resumability(run, snapshot).resumable) return snapshot;
  const pending = new Set(snapshot.pending.map((a) => a.id));
  const done = [...new Set(trace.entries.map((e) => e.activation))].filter((a) => !pending.has(a));
  io.json({
    type: 'resuming',
    runId,
    status: snapshot.status,
    readBack: done,
    toRun: [...pending],
  });
  if (snapshot.status === 'succeeded') {
    io.line(
      `run ${runId} has succeeded already: nothing runs again (${done.length} step(s) on record)`,
    );
    return snapshot;
  }
  io.line(
    `resuming ${runId} (${snapshot.status}): ${done.length} completed step(s) read back from the checkpoints, not run again${done.length > 0 ? `: ${done.join(', ')}` : ''}`,
  );
  if (pending.size > 0) io.line(`to run:      ${[...pending].join(', ')}`);
  return snapshot;
}

function firstLine(text: string): string {
  const [first, ...rest] = text.split('\n');
  return rest.length > 0 ? `${first} …` : (first ?? '');
}
