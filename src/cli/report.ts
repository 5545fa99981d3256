import type { CompiledGraph } from '../graph/compiled.js';
import { loadTrace } from '../runtime/history.js';
import { inspect } from '../runtime/inspect.js';
import type { RunResult } from '../runtime/run-types.js';
import type { WaitRequest } from '../runtime/waits.js';
import type { SqliteStore } from '../store/sqlite-store.js';
import type { WaitRecord } from '../store/store.js';
import { exitCodeOf } from './exit.js';
import type { Io } from './io.js';

/** An open wait as the CLI shows it. */
export interface OpenWaitView {
  readonly requestId: string;
  readonly node: string;
  readonly prompt: string;
  readonly schema: unknown;
}

/** What a wait asks, read from its stored request. */
export function waitView(wait: WaitRecord): OpenWaitView {
  const request = JSON.parse(wait.request) as WaitRequest;
  return {
    requestId: wait.requestId,
    node: wait.node,
    prompt: request.prompt,
    schema: request.schema,
  };
}

/**
 * Prints how a run stands after a command moved it (run, resume, answer, rewind): status, the
 * whole path across every process that ran it, where its checkpoints live, and what to do next.
 * Returns the exit code for that status.
 */
export async function reportRun(io: Io, store: SqliteStore, result: RunResult): Promise<number> {
  const { runId, status } = result;
  const { path } = await loadTrace(store, runId);
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
    db: store.path,
  });
  const { c } = io;
  const colour = status === 'succeeded' ? c.green : status === 'waiting' ? c.yellow : c.red;
  io.line();
  io.line(`run ${c.bold(runId)} ${colour(status)} after ${result.steps} step(s)`);
  io.line(`path:        ${path.join(' -> ')}`);
  io.line(`checkpoints: ${store.path}`);
  if (error !== undefined) {
    io.line(`error:       ${c.red(`${error.code}: ${error.message}`)} (at ${error.activation})`);
  }
  switch (status) {
    case 'waiting':
      for (const wait of waits) {
        io.line(
          `waiting:     ${wait.node} asks "${firstLine(wait.prompt)}" (request ${wait.requestId})`,
        );
      }
      io.line(
        c.dim(
          `next:        waymark answer ${runId} --value '<json>'  (or approve / reject for a yes-no question)`,
        ),
      );
      break;
    case 'failed':
    case 'timed_out':
      io.line(
        c.dim(`next:        waymark resume ${runId}  (only what did not complete runs again)`),
      );
      break;
    default:
      break;
  }
  if (io.flags.quiet) io.essential(`${runId} ${status}`);
  return exitCodeOf(status);
}

/**
 * Before a resume: what is read back from the checkpoints and what will run, so the output says
 * that only the unfinished steps run again.
 */
export async function explainResume(
  io: Io,
  store: SqliteStore,
  graph: CompiledGraph,
  runId: string,
): Promise<void> {
  const { snapshot, trace } = await inspect(store, graph, runId);
  // resume() refuses a cancelled run: announcing what would run again would be untrue.
  if (snapshot.status === 'cancelled') return;
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
    return;
  }
  io.line(
    `resuming ${runId} (${snapshot.status}): ${done.length} completed step(s) read back from the checkpoints, not run again${done.length > 0 ? `: ${done.join(', ')}` : ''}`,
  );
  if (pending.size > 0) io.line(`to run:      ${[...pending].join(', ')}`);
}

function firstLine(text: string): string {
  const [first, ...rest] = text.split('\n');
  return rest.length > 0 ? `${first} …` : (first ?? '');
}
