import type { CompiledGraph } from '../../graph/compiled.js';
import type { Store } from '../../store/store.js';
import type { TraceEntry } from '../watch/trace.js';
import { loadTrace } from './history.js';

/** Tokens and cost, as recorded or expected. */
export interface Cost {
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly costUsd: number;
}

/** What one node is expected to spend, from the recorded usage of earlier runs. */
export interface NodeExpectation {
  readonly node: string;
  /** The median over recorded activations of what one activation spent (all its attempts). */
  readonly perActivation: Cost;
  /** The median over the runs of what the node spent in one run (its loops included). */
  readonly perRun: Cost;
  /** Activations the median is taken over. */
  readonly activations: number;
}

/** The expected cost of a run of a graph, next to its worst case. */
export interface Expected {
  /** Runs of the same graph hash that the medians are taken over (newest first). */
  readonly runs: readonly string[];
  readonly nodes: readonly NodeExpectation[];
  /** The sum of every node's `perRun`: what a run is expected to spend. */
  readonly perRun: Cost;
}

/** Options of {@link expectedCost}. */
export interface ExpectedOptions {
  /** Runs looked at, newest first. Default 50. */
  readonly limit?: number;
}

const none: Cost = { inputTokens: 0, outputTokens: 0, costUsd: 0 };

/**
 * The expected cost of a run of `graph`: for each node, the median of what its activations
 * (and its runs) spent, over the recorded usage of earlier runs with the same graph hash. A
 * node no earlier run reached is absent: there is nothing to take a median of.
 *
 * @example
 * const { perRun, nodes } = await expectedCost(store, changelogPost);
 */
export async function expectedCost(
  store: Store,
  graph: CompiledGraph,
  options: ExpectedOptions = {},
): Promise<Expected> {
  const records = await store.listRuns({ graph: graph.name });
  const runs = records.filter((r) => r.graphHash === graph.hash).slice(0, options.limit ?? 50);
  const perActivation = new Map<string, Cost[]>();
  const perRun = new Map<string, Cost[]>();
  for (const record of runs) {
    const trace = await loadTrace(store, record.id);
    const inRun = new Map<string, Cost>();
    for (const [activation, cost] of byActivation(trace.entries)) {
      const node = activation.node;
      push(perActivation, node, cost);
      inRun.set(node, add(inRun.get(node) ?? none, cost));
    }
    for (const [node, cost] of inRun) push(perRun, node, cost);
  }
  const nodes = [...perActivation].map(([node, costs]) => ({
    node,
    perActivation: median(costs),
    perRun: median(perRun.get(node)!),
    activations: costs.length,
  }));
  return {
    runs: runs.map((r) => r.id),
    nodes,
    perRun: nodes.reduce((sum, n) => add(sum, n.perRun), none),
  };
}

/**
 * What each activation of a trace spent, over all its attempts: the entries that ran (an
 * activation read back from another run spent nothing here).
 */
export function byActivation(
  entries: readonly TraceEntry[],
): Map<{ readonly node: string; readonly id: string }, Cost> {
  const keys = new Map<string, { node: string; id: string }>();
  const out = new Map<{ readonly node: string; readonly id: string }, Cost>();
  for (const e of entries) {
    if (e.reused) continue;
    let key = keys.get(e.activation);
    if (key === undefined) {
      key = { node: e.node, id: e.activation };
      keys.set(e.activation, key);
      out.set(key, none);
    }
    out.set(key, add(out.get(key)!, costOf(e)));
  }
  return out;
}

export function costOf(e: TraceEntry): Cost {
  return {
    inputTokens: e.usage?.inputTokens ?? 0,
    outputTokens: e.usage?.outputTokens ?? 0,
    costUsd: e.usage?.costUsd ?? 0,
  };
}

export function add(a: Cost, b: Cost): Cost {
  return {
    inputTokens: a.inputTokens + b.inputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
    costUsd: a.costUsd + b.costUsd,
  };
}

function push(map: Map<string, Cost[]>, key: string, cost: Cost): void {
  const list = map.get(key);
  if (list) list.push(cost);
  else map.set(key, [cost]);
}

/** The median of each field on its own (the lower middle of an even count: a value seen). */
function median(costs: readonly Cost[]): Cost {
  const mid = (values: number[]) => values.sort((a, b) => a - b)[(values.length - 1) >> 1] ?? 0;
  return {
    inputTokens: mid(costs.map((c) => c.inputTokens)),
    outputTokens: mid(costs.map((c) => c.outputTokens)),
    costUsd: mid(costs.map((c) => c.costUsd)),
  };
}
