import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { WaymarkError } from '../../error/waymark-error.js';
import type { CompiledGraph } from '../../graph/compiled.js';
import type { Budget } from '../../graph/types.js';
import { resume } from '../../runtime/resume.js';
import { run } from '../../runtime/run.js';
import type { Io } from '../io.js';
import { loadGraph } from '../load-graph.js';
import { withProgress } from '../progress.js';
import { explainResume, reportRun } from '../report.js';
import { graphFileLabel, graphOfRun, parseJson, withRunStore, withStore } from '../session.js';

interface RunFlags {
  readonly input?: string;
  readonly inputFile?: string;
  readonly runId?: string;
  readonly reuse?: string;
  readonly model?: string;
  readonly maxTokens?: string;
  readonly maxCost?: string;
}

export function runCommands(program: Command, io: () => Io, done: (code: number) => void) {
  program
    .command('run')
    .description('start a run of a graph file, checkpointing every step into the database')
    .argument('<graph-file>', 'a .ts or .js module whose default export is a graph')
    .option('--input <json>', 'the run input, as JSON (default {})')
    .option('--input-file <path>', 'read the run input from a JSON file')
    .option('--run-id <id>', 'the new run id (default: a fresh UUID)')
    .option(
      '--reuse <run-id>',
      'reuse the recorded output of every step whose inputs match this run',
    )
    .option(
      '--model <provider:model-id>',
      'the model every model node uses, e.g. openai:gpt-4o-mini',
    )
    .option('--max-tokens <n>', 'most model tokens the whole run may spend')
    .option('--max-cost <usd>', 'most model cost, in US dollars, the whole run may spend')
    .addHelpText(
      'after',
      `
Example:
  $ waymark run examples/changelog-post/graph.ts --input '{"version":"2.4.0"}'
  $ waymark run examples/resilience-audit/graph.ts --model openai:gpt-4o-mini --max-cost 0.50

Exit code: 0 succeeded, 3 waiting for an answer, 1 failed, timed out or cancelled, 2 bad usage or input.`,
    )
    .action(async (file: string, flags: RunFlags) => {
      const out = io();
      const input = readInput(flags);
      const { graph, path } = await loadGraph(file);
      const budget = budgetOf(flags);
      announceModels(out, graph, flags.model);
      done(
        await withStore(out, async (store) => {
          const result = await withProgress(out, (live) =>
            run(graph, input as never, {
              store,
              ...(flags.runId !== undefined && { runId: flags.runId }),
              ...(flags.reuse !== undefined && { reuseFrom: flags.reuse }),
              ...(flags.model !== undefined && { model: flags.model }),
              ...(budget !== undefined && { budget }),
              labels: { [graphFileLabel]: path },
              ...live,
            }),
          );
          return reportRun(out, store, result);
        }),
      );
    });

  program
    .command('resume')
    .description('continue a run that failed, waits for an answer, or was interrupted')
    .argument('<run-id>')
    .option('--graph <graph-file>', 'the graph file (default: the one the run was started with)')
    .addHelpText(
      'after',
      `
Only the activations that did not complete run again; everything before is read back.

Example:
  $ waymark resume 3f1c9a2e-...`,
    )
    .action(async (runId: string, flags: { graph?: string }) => {
      const out = io();
      done(
        await withRunStore(out, runId, async (store) => {
          const graph = await graphOfRun(store, runId, flags.graph);
          await explainResume(out, store, graph, runId);
          const result = await withProgress(out, (live) => resume(store, graph, runId, live));
          return reportRun(out, store, result);
        }),
      );
    });
}

function readInput(flags: RunFlags): unknown {
  if (flags.input !== undefined && flags.inputFile !== undefined) {
    throw new WaymarkError('USAGE_INVALID', 'give --input or --input-file, not both', {
      retryable: false,
    });
  }
  if (flags.input !== undefined) return parseJson(flags.input, '--input');
  if (flags.inputFile === undefined) return {};
  let text: string;
  try {
    text = readFileSync(flags.inputFile, 'utf8');
  } catch (cause) {
    const why = cause instanceof Error ? cause.message : String(cause);
    throw new WaymarkError('USAGE_INVALID', `cannot read --input-file: ${why}`, {
      retryable: false,
    });
  }
  return parseJson(text, `--input-file ${flags.inputFile}`);
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
function announceModels(out: Io, graph: CompiledGraph, model: string | undefined): void {
  const nodes = graph.def.nodes.filter((n) => n.kind === 'model').map((n) => n.name);
  if (nodes.length === 0) return;
  out.json({ type: 'models', nodes, model: model ?? null });
  out.line(
    model === undefined
      ? `models: ${nodes.join(', ')} use the graph's own models (scripted in the examples); --model provider:model-id uses a real one`
      : `models: ${nodes.join(', ')} call ${model}`,
  );
}
