import { refuseOverBudget } from '../../cost/budget.js';
import { WaymarkError } from '../../error/waymark-error.js';
import type { CompiledGraph } from '../../graph/compiled.js';
import type { Clock } from '../clock.js';
import { deepFreeze } from '../core/freeze.js';
import type { RunLimits } from '../core/snapshot.js';
import type { RunOptions } from '../run-types.js';

/** Default run-level step limit. */
export const defaultMaxSteps = 10_000;

/**
 * The limits a new run keeps in its snapshot (so that a resume, or any worker, holds it to the
 * same ones): its step limit, budget, model, deadline and breakpoints.
 * @throws WaymarkError `OPTIONS_INVALID` for a breakpoint that names no node of the graph.
 *
 * @example
 * const limits = runLimits(graph, options, clock);
 */
export function runLimits(
  graph: CompiledGraph,
  options: Pick<
    RunOptions,
    | 'maxSteps'
    | 'budget'
    | 'maxTokens'
    | 'maxCostUsd'
    | 'model'
    | 'timeoutMs'
    | 'pauseBefore'
    | 'pauseAfter'
    | 'context'
  >,
  clock: Clock,
): RunLimits {
  const { model, timeoutMs, pauseBefore, pauseAfter } = options;
  const promised = { maxTokens: options.maxTokens, maxCostUsd: options.maxCostUsd };
  // Refused before anything is recorded: the worst case must fit what the caller promised.
  if (promised.maxTokens !== undefined || promised.maxCostUsd !== undefined)
    refuseOverBudget(graph, promised);
  const budget = {
    maxTokens: least(options.budget?.maxTokens, promised.maxTokens),
    maxCostUsd: least(options.budget?.maxCostUsd, promised.maxCostUsd),
  };
  for (const [name, nodes] of [
    ['pauseBefore', pauseBefore],
    ['pauseAfter', pauseAfter],
  ] as const) {
    if (nodes === undefined) continue;
    const unknown = Array.isArray(nodes)
      ? nodes.filter((n) => typeof n !== 'string' || !graph.nodes.has(n))
      : [nodes];
    if (unknown.length > 0) {
      throw new WaymarkError(
        'OPTIONS_INVALID',
        `run option ${name} names ${unknown.map((n) => JSON.stringify(n)).join(', ')}, not a node of graph "${graph.name}"`,
        { retryable: false, details: { option: name } },
      );
    }
  }
  const context = contextOf(graph, options.context);
  return {
    maxSteps: options.maxSteps ?? defaultMaxSteps,
    ...(budget.maxTokens !== undefined && { maxTokens: budget.maxTokens }),
    ...(budget.maxCostUsd !== undefined && { maxCostUsd: budget.maxCostUsd }),
    ...(model !== undefined && { model }),
    // The deadline is data from the start: a resume finds it, instead of starting a new one.
    ...(timeoutMs !== undefined && { deadlineAt: clock.now() + timeoutMs, timeoutMs }),
    ...(pauseBefore !== undefined && pauseBefore.length > 0 && { pauseBefore: [...pauseBefore] }),
    ...(pauseAfter !== undefined && pauseAfter.length > 0 && { pauseAfter: [...pauseAfter] }),
    ...(context !== undefined && { context }),
  };
}

/**
 * The run's context as the graph's schema parses it (defaults filled), frozen: what every node
 * reads as `ctx.context`.
 * @throws WaymarkError `CONTEXT_INVALID` for a context the schema refuses, or one given to a
 *   graph that declares no context schema.
 */
function contextOf(graph: CompiledGraph, given: unknown): unknown {
  const schema = graph.context;
  if (schema === undefined) {
    if (given === undefined) return undefined;
    throw new WaymarkError(
      'CONTEXT_INVALID',
      `graph "${graph.name}" declares no context, and the run was given one; declare graph(name, { state, context: z.object({...}) }) to take it`,
      { retryable: false },
    );
  }
  const parsed = schema.safeParse(given);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => ({
      path: i.path.map(String),
      message: i.message,
    }));
    const first = issues[0];
    const at = first === undefined || first.path.length === 0 ? '' : ` at ${first.path.join('.')}`;
    throw new WaymarkError(
      'CONTEXT_INVALID',
      `the context of a run of "${graph.name}" does not match its context schema${at}: ${first?.message ?? 'invalid'}`,
      { retryable: false, details: issues },
    );
  }
  // Copied through JSON: it is stored with the run, and a resume must read back what ran.
  return parsed.data === undefined
    ? undefined
    : deepFreeze(JSON.parse(JSON.stringify(parsed.data)));
}

function least(a: number | undefined, b: number | undefined): number | undefined {
  return a === undefined ? b : b === undefined ? a : Math.min(a, b);
}
