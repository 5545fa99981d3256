import { WaymarkError } from '../../error/waymark-error.js';
import type { CompiledGraph } from '../../graph/compiled.js';
import type { Store } from '../../store/store.js';
import { add, byActivation, type Cost, expectedCost } from './expected.js';
import { inspect } from './inspect.js';

/** One activation of a plan: read back from the record, or run again at a price. */
export interface PlanStep {
  readonly node: string;
  readonly activation: string;
  /** What running it again costs; zero for what is read back. */
  readonly cost: Cost;
  /**
   * Where the price comes from: `recorded` (what this activation spent when it ran), `expected`
   * (the median of the node's recorded activations in runs of the same graph hash), `none`
   * (nothing recorded: the node spent nothing, or never ran anywhere).
   */
  readonly basis: 'recorded' | 'expected' | 'none';
}

/** What a resume or a rewind will do, said before anything runs. */
export interface Plan {
  readonly runId: string;
  readonly kind: 'resume' | 'rewind';
  /** Completed activations whose recorded outputs stand: nothing of theirs runs or is paid again. */
  readonly readBack: readonly PlanStep[];
  /** Activations that run again, in order, each with its price. */
  readonly runAgain: readonly PlanStep[];
  /** The sum of `runAgain`'s prices: what the resume or rewind re-pays. */
  readonly rePays: Cost;
  /** Set when the plan stops at a wait: what follows depends on the answer. */
  readonly waitsAt?: string;
}

const zero: Cost = { inputTokens: 0, outputTokens: 0, costUsd: 0 };

/**
 * What `resume` would do to a stored run, without doing it: which completed activations are
 * read back, which pending ones run again (a failed one from its first attempt), and what they
 * re-pay, priced by the recorded usage of the node's activations in runs of the same graph
 * hash (their median), else by what this activation itself spent. What the run does after
 * them is new work, not re-payment: see `expectedCost` and `boundOf` for it.
 * @throws WaymarkError `RUN_NOT_FOUND`, `GRAPH_MISMATCH`.
 *
 * @example
 * const plan = await planResume(store, changelogPost, runId);
 * plan.runAgain.map((s) => s.node); // ['fact-check']
 */
export async function planResume(store: Store, graph: CompiledGraph, runId: string): Promise<Plan> {
  const view = await inspect(store, graph, runId);
  const spent = byId(view.trace.entries);
  const expected = new Map(
    (await expectedCost(store, graph)).nodes.map((n) => [n.node, n.perActivation]),
  );
  const pending = view.snapshot.pending.filter(
    // A blocked route or join only takes its decision again: no node body runs for it.
    (a) => a.blocked === undefined || a.blocked === 'branch' || a.blocked === 'enqueue',
  );
  const again = new Set(pending.map((a) => a.id));
  const runAgain = pending.map((a): PlanStep => {
    const median = expected.get(a.node);
    if (median !== undefined && !isZero(median))
      return { node: a.node, activation: a.id, cost: median, basis: 'expected' };
    const own = spent.get(a.id);
    return own && !isZero(own.cost)
      ? { node: a.node, activation: a.id, cost: own.cost, basis: 'recorded' }
      : { node: a.node, activation: a.id, cost: zero, basis: 'none' };
  });
  const readBack = [...spent.values()]
    .filter((s) => !again.has(s.activation))
    .map((s) => ({ ...s, cost: zero, basis: 'none' as const }));
  const wait = view.waits.find((w) => w.answer === null && w.closedAt == null);
  return {
    runId,
    kind: 'resume',
    readBack,
    runAgain,
    rePays: runAgain.reduce((sum, s) => add(sum, s.cost), zero),
    ...(wait && { waitsAt: wait.node }),
  };
}

/** Options of {@link planRewind}: those of `rewind` that decide what runs again. */
export interface RewindPlanOptions {
  readonly to: string;
  /** The fields the rewind changes (its `update`, the editor's note). */
  readonly update?: Readonly<Record<string, unknown>>;
}

/**
 * What `rewind(store, graph, runId, options)` would do, without doing it: everything before
 * `to`'s last activation is read back; from there on, an activation of the recorded path runs
 * again when it reads a field changed by the update or by a node that runs again (the
 * input-hash reuse rule, read from the nodes' declared `reads` and `writes`); the rest, `to`
 * included when the update leaves its inputs as they were, is read back. Each activation that runs again re-pays what it spent when it ran. The plan
 * follows the recorded path and stops at the first wait that runs again: after a changed
 * output, the path itself may change.
 * @throws WaymarkError `RUN_NOT_FOUND`, `GRAPH_MISMATCH`, `OPTIONS_INVALID` (a node the run
 *   never reached).
 *
 * @example
 * const plan = await planRewind(store, changelogPost, runId, { to: 'draft', update: { notes: ['shorter'] } });
 * plan.rePays; // draft and fact-check, as recorded
 */
export async function planRewind(
  store: Store,
  graph: CompiledGraph,
  runId: string,
  options: RewindPlanOptions,
): Promise<Plan> {
  const view = await inspect(store, graph, runId);
  const steps = [...byId(view.trace.entries).values()];
  const from = steps.findLastIndex((s) => s.node === options.to);
  if (from === -1) {
    throw new WaymarkError('OPTIONS_INVALID', `run "${runId}" never reached node "${options.to}"`, {
      retryable: false,
    });
  }
  const changed = new Set(Object.keys(options.update ?? {}));
  let all = false;
  const readBack: PlanStep[] = steps.slice(0, from).map((s) => ({ ...s, cost: zero }));
  const runAgain: PlanStep[] = [];
  let waitsAt: string | undefined;
  for (const step of steps.slice(from)) {
    const node = graph.nodes.get(step.node);
    const reads = node?.def.reads;
    // The input-hash rule: an activation whose inputs are as recorded is read back, `to` too.
    const runs =
      all || (reads === undefined ? changed.size > 0 : reads.some((field) => changed.has(field)));
    if (!runs) {
      readBack.push({ ...step, cost: zero });
      continue;
    }
    runAgain.push(step);
    const writes = node?.def.writes;
    if (writes === undefined) all = true;
    else for (const field of writes) changed.add(field);
    if (node?.traits.opensWait) {
      waitsAt = step.node;
      break;
    }
  }
  return {
    runId,
    kind: 'rewind',
    readBack: readBack.map((s) => ({ ...s, basis: 'none' as const })),
    runAgain,
    rePays: runAgain.reduce((sum, s) => add(sum, s.cost), zero),
    ...(waitsAt !== undefined && { waitsAt }),
  };
}

/** Each activation of a trace, in the order it first ran, with what it spent. */
function byId(entries: Parameters<typeof byActivation>[0]): Map<string, PlanStep> {
  const out = new Map<string, PlanStep>();
  for (const e of entries) {
    if (out.has(e.activation)) continue;
    out.set(e.activation, { node: e.node, activation: e.activation, cost: zero, basis: 'none' });
  }
  for (const [key, cost] of byActivation(entries)) {
    out.set(key.id, {
      node: key.node,
      activation: key.id,
      cost,
      basis: isZero(cost) ? 'none' : 'recorded',
    });
  }
  return out;
}

function isZero(c: Cost): boolean {
  return c.inputTokens === 0 && c.outputTokens === 0 && c.costUsd === 0;
}
