import { readFileSync } from 'node:fs';
import { parseBudget } from '../../cost/budget-text.js';
import { storedJson } from '../../error/store-corrupt.js';
import { isWaymarkError, WaymarkError } from '../../error/waymark-error.js';
import type { CompiledGraph } from '../../graph/compiled.js';
import { startState } from '../../graph/run-input.js';
import type { Budget } from '../../graph/types.js';
import { resultOf } from '../../runtime/local/result.js';
import { resume as resumeStored } from '../../runtime/local/resume.js';
import { run as startRun } from '../../runtime/local/run.js';
import { loadTrace } from '../../runtime/ops/history.js';
import { inspect } from '../../runtime/ops/inspect.js';
import { enqueue as enqueueRun } from '../../runtime/worker/enqueue.js';
import { exitCode } from '../exit-code.js';
import type { Io } from '../io.js';
import { loadGraph } from '../load-graph.js';
import { whatWorks } from '../next.js';
import { withProgress } from '../progress.js';
import { explainResume, reportRun } from '../report.js';
import {
  type CliStore,
  graphFileLabel,
  graphOfRun,
  locationOf,
  parseJson,
  whereIs,
  withRunStore,
  withStore,
} from '../session.js';
import { onlySleeps, refuseBeforeDue } from '../sleeps.js';

interface RunFlags {
  readonly input?: string;
  readonly inputFile?: string;
  readonly runId?: string;
  readonly reuse?: string;
  readonly model?: string;
  readonly context?: string;
  readonly maxTokens?: string;
  readonly maxCost?: string;
  readonly budget?: string;
  readonly pauseBefore?: string;
  readonly pauseAfter?: string;
  readonly enqueue?: boolean;
  readonly wait?: boolean;
}

/** `waymark run <graph-file>`: a new run, announced as it starts, with live progress. */
export async function run(out: Io, file: string, flags: RunFlags): Promise<number> {
  out.about.graphFile = file;
  const given = readInput(flags);
  const { graph, path } = await loadGraph(file);
  out.about.graphFile = path;
  const budget = budgetOf(flags);
  const promised = flags.budget === undefined ? {} : parseBudget(flags.budget);
  const runId = flags.runId ?? crypto.randomUUID();
  if (flags.wait && !flags.enqueue) {
    throw new WaymarkError('USAGE_INVALID', '--wait follows an enqueued run: give --enqueue too', {
      retryable: false,
    });
  }
  if (flags.enqueue) {
    refuseInput(graph, given);
    announceModels(out, graph, flags.model);
    return enqueued(out, graph, path, given, runId, flags, budget);
  }
  return withStore(out, 'create', async (store) => {
    const input = given ?? (await inputOf(store, flags.reuse));
    refuseInput(graph, input);
    announceModels(out, graph, flags.model);
    out.about.runId = runId;
    const result = await withProgress(
      out,
      runId,
      (live) =>
        startRun(graph, input as never, {
          store,
          runId,
          ...(flags.reuse !== undefined && { reuseFrom: flags.reuse }),
          ...(flags.model !== undefined && { model: flags.model }),
          ...(flags.context !== undefined && { context: parseJson(flags.context, '--context') }),
          ...(budget !== undefined && { budget }),
          ...promised,
          ...breakpointsOf(flags),
          labels: { [graphFileLabel]: path },
          ...live,
        }),
      () => {
        out.json({ type: 'run-started', runId, graph: graph.name, db: locationOf(out) });
        out.line(
          `run ${out.c.bold(runId)} of graph "${graph.name}", checkpoints in ${whereIs(store)}`,
        );
      },
    );
    return reportRun(out, store, result);
  });
}

/** `waymark resume <run-id>`: only what did not complete runs again. */
export async function resume(
  out: Io,
  runId: string,
  flags: { readonly graph?: string; readonly plan?: boolean; readonly goto?: string },
): Promise<number> {
  return withRunStore(out, runId, async (store) => {
    const graph = await graphOfRun(out, store, runId, flags.graph);
    if (flags.plan === true) {
      const [{ planResume }, { printPlan }] = await Promise.all([
        import('../../runtime/ops/plan.js'),
        import('./plan.js'),
      ]);
      return printPlan(out, await planResume(store, graph, runId));
    }
    if (flags.goto === undefined) {
      // A resume of a run that only sleeps, before it is due, would wait: it is refused instead.
      const { inspect } = await import('../../runtime/ops/inspect.js');
      refuseBeforeDue((await inspect(store, graph, runId)).snapshot, Date.now());
    }
    return resumeRun(out, store, graph, runId, flags.goto);
  });
}

/**
 * Continues a run with live progress, saying first what is read back and what will run. When
 * `resume()` refuses (RUN_NOT_RESUMABLE), the hint names what works instead.
 */
export async function resumeRun(
  out: Io,
  store: CliStore,
  graph: CompiledGraph,
  runId: string,
  goto?: string,
): Promise<number> {
  const snapshot = await explainResume(out, store, graph, runId);
  if (goto !== undefined) out.line(`moving it to ${goto} first: what was pending there is dropped`);
  try {
    const result = await withProgress(out, runId, (live) =>
      resumeStored(store, graph, runId, goto === undefined ? live : { ...live, goto }),
    );
    return await reportRun(out, store, result);
  } catch (error) {
    if (isWaymarkError(error) && error.code === 'RUN_NOT_RESUMABLE') {
      out.about.next = whatWorks(out, runId, snapshot, (await loadTrace(store, runId)).entries);
    }
    throw error;
  }
}

/** --pause-before and --pause-after, as the run options they name: lists of nodes. */
function breakpointsOf(flags: RunFlags): { pauseBefore?: string[]; pauseAfter?: string[] } {
  const list = (value: string | undefined) =>
    value === undefined
      ? undefined
      : value
          .split(',')
          .map((n) => n.trim())
          .filter((n) => n !== '');
  const pauseBefore = list(flags.pauseBefore);
  const pauseAfter = list(flags.pauseAfter);
  return {
    ...(pauseBefore !== undefined && { pauseBefore }),
    ...(pauseAfter !== undefined && { pauseAfter }),
  };
}

/** The run input given with --input or --input-file (`-`: standard input); undefined if none. */
export function readInput(flags: Pick<RunFlags, 'input' | 'inputFile'>): unknown {
  if (flags.input !== undefined && flags.inputFile !== undefined) {
    throw new WaymarkError('USAGE_INVALID', 'give --input or --input-file, not both', {
      retryable: false,
    });
  }
  if (flags.input !== undefined) return parseJson(flags.input, '--input');
  if (flags.inputFile === undefined) return undefined;
  const stdin = flags.inputFile === '-';
  let text: string;
  try {
    text = readFileSync(stdin ? 0 : flags.inputFile, 'utf8');
  } catch (cause) {
    const why = cause instanceof Error ? cause.message : String(cause);
    throw new WaymarkError(
      'USAGE_INVALID',
      `cannot read --input-file ${stdin ? '- (standard input)' : flags.inputFile}: ${why}`,
      { retryable: false },
    );
  }
  return parseJson(
    text,
    stdin ? '--input-file - (standard input)' : `--input-file ${flags.inputFile}`,
  );
}

/**
 * The input of a run started without one: `{}`, or with --reuse, the input the reused run
 * started from (its first checkpoint's state), so a fixed graph reruns the same work.
 * @throws WaymarkError `RUN_NOT_FOUND` for a --reuse run the database does not have.
 */
async function inputOf(store: CliStore, reuse: string | undefined): Promise<unknown> {
  if (reuse === undefined) return {};
  const first = await store.snapshotAt(reuse, 0);
  if (first === undefined) {
    throw new WaymarkError(
      'RUN_NOT_FOUND',
      `there is no run "${reuse}" in ${whereIs(store)} to reuse`,
      {
        retryable: false,
      },
    );
  }
  return (storedJson(first.data, reuse, 'its first snapshot') as { state: unknown }).state;
}

function budgetOf(flags: RunFlags): Budget | undefined {
  const number = (text: string | undefined, option: string) => {
    if (text === undefined) return undefined;
    const value = Number(text);
    if (!(Number.isFinite(value) && value > 0)) {
      throw new WaymarkError('USAGE_INVALID', `${option} ${text} must be a number > 0`, {
        retryable: false,
      });
    }
    return value;
  };
  const maxTokens = number(flags.maxTokens, '--max-tokens');
  const maxCostUsd = number(flags.maxCost, '--max-cost');
  if (maxTokens === undefined && maxCostUsd === undefined) return undefined;
  return {
    ...(maxTokens !== undefined && { maxTokens }),
    ...(maxCostUsd !== undefined && { maxCostUsd }),
  };
}

/** Says which model the graph's model nodes will call, so a scripted run never passes for a real one. */
// An input the graph refuses is refused before anything is said about the run it would be.
function refuseInput(graph: CompiledGraph, input: unknown): void {
  if (input !== undefined) startState(graph, input);
}

function announceModels(out: Io, graph: CompiledGraph, model: string | undefined): void {
  // The compiled nodes, not the declaration's: a subgraph's model nodes (`audit/audit`) count.
  const nodes = [...graph.nodes.values()]
    .filter((n) => n.def.kind === 'model')
    .map((n) => n.def.name);
  if (nodes.length === 0) return;
  out.json({ type: 'models', nodes, model: model ?? null });
  out.line(
    model === undefined
      ? `models: ${nodes.join(', ')} use the graph's own models (a scripted one is no real call); --model provider:model-id uses a real one`
      : `models: ${nodes.join(', ')} call ${model}`,
  );
}

/** `run --enqueue`: the run is recorded for the workers, and followed to its end with --wait. */
async function enqueued(
  out: Io,
  graph: CompiledGraph,
  path: string,
  given: unknown,
  runId: string,
  flags: RunFlags,
  budget: Budget | undefined,
): Promise<number> {
  return withStore(out, 'create', async (store) => {
    const queue = store as unknown as Parameters<typeof enqueueRun>[0];
    out.about.runId = runId;
    await enqueueRun(queue, graph, (given ?? {}) as never, {
      runId,
      labels: { [graphFileLabel]: path },
      ...(flags.model !== undefined && { model: flags.model }),
      ...(flags.context !== undefined && { context: parseJson(flags.context, '--context') }),
      ...(budget !== undefined && { budget }),
      ...(flags.budget !== undefined && parseBudget(flags.budget)),
    });
    out.json({ type: 'run-enqueued', runId, graph: graph.name, db: locationOf(out) });
    out.line(
      `run ${out.c.bold(runId)} of graph "${graph.name}" enqueued for the workers of ${whereIs(store)}`,
    );
    if (!flags.wait) {
      out.essential(runId);
      return exitCode.succeeded;
    }
    // Followed by polling the run's row: cheap, and the same whichever worker drives it. A run
    // that only sleeps is followed on: the workers wake it, nobody has to answer anything.
    let view: Awaited<ReturnType<typeof inspect>>;
    for (;;) {
      const record = await store.getRun(runId);
      if (record !== undefined && record.status !== 'running') {
        view = await inspect(store, graph, runId);
        if (!onlySleeps(view.snapshot)) break;
      }
      await new Promise((resolve) => setTimeout(resolve, record?.status === 'waiting' ? 500 : 100));
    }
    return reportRun(out, store, resultOf(view.snapshot, view.trace));
  });
}
