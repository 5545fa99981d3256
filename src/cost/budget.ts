import { WaymarkError } from '../error/waymark-error.js';
import type { CompiledGraph } from '../graph/compiled.js';
import type { GraphDef } from '../graph/types.js';
import type { Amounts } from './amounts.js';
import { type Bound, boundOf } from './bound.js';

/** A budget the worst case must fit in: tokens (input + output) and US dollars. */
export interface BoundLimits {
  readonly maxTokens?: number | undefined;
  readonly maxCostUsd?: number | undefined;
}

/** One limit the worst case is above. */
export interface OverLimit {
  readonly limit: 'maxTokens' | 'maxCostUsd';
  readonly max: number;
  /** The worst case; null when it has no bound. */
  readonly bound: number | null;
}

/** A node that makes the worst case what it is: its own worst case, or why it has none. */
export interface CostlyNode {
  readonly node: string;
  readonly tokens: number | null;
  readonly costUsd: number | null;
  readonly reason?: string;
}

const bounds = new WeakMap<object, Bound>();

/** {@link boundOf}, computed once per compiled graph (a graph is immutable once compiled). */
export function cachedBound(graph: CompiledGraph): Bound {
  let bound = bounds.get(graph);
  if (bound === undefined) {
    bound = boundOf(graph);
    bounds.set(graph, bound);
  }
  return bound;
}

/**
 * The `BOUND_OVER_BUDGET` error for a graph whose worst case does not fit `limits`, naming the
 * limits it is above and the nodes that spend most (or have no bound, with the reason);
 * undefined when it fits. A part the bound cannot count does not fit any limit: a promise
 * cannot rest on it.
 *
 * @example
 * const refusal = overBudget(boundOf(g), { maxCostUsd: 2 });
 * if (refusal) throw refusal;
 */
export function overBudget(bound: Bound, limits: BoundLimits): WaymarkError | undefined {
  const over: OverLimit[] = [];
  const metric = { maxTokens: 'tokens', maxCostUsd: 'costUsd' } as const;
  for (const limit of ['maxTokens', 'maxCostUsd'] as const) {
    const max = limits[limit];
    const worst = bound.total[metric[limit]];
    if (max !== undefined && worst > max)
      over.push({ limit, max, bound: worst === Infinity ? null : worst });
  }
  if (over.length === 0) return undefined;
  const nodes = costlyNodes(bound, over);
  const what = over
    .map(
      (o) => `${o.limit} ${o.max} (worst case ${o.bound === null ? 'unbounded' : round(o.bound)})`,
    )
    .join(' and ');
  const who = nodes
    .map((n) => (n.reason ? `${n.node}: ${n.reason}` : `${n.node} ${worstOf(n)}`))
    .join('; ');
  return new WaymarkError(
    'BOUND_OVER_BUDGET',
    `graph "${bound.graph}" can spend more than ${what}; the nodes over it: ${who}`,
    { retryable: false, errorClass: 'budget', details: { graph: bound.graph, over, nodes } },
  );
}

/** Throws {@link overBudget}'s refusal for `graph` if it has one. */
export function refuseOverBudget(graph: CompiledGraph | GraphDef, limits: BoundLimits): void {
  const bound = 'def' in graph ? cachedBound(graph) : boundOf(graph);
  const refusal = overBudget(bound, limits);
  if (refusal) throw refusal;
}

function costlyNodes(bound: Bound, over: readonly OverLimit[]): CostlyNode[] {
  const keys = over.map((o) => (o.limit === 'maxTokens' ? 'tokens' : 'costUsd'));
  const open = bound.unbounded.filter((u) =>
    keys.some(
      (k) => u.what === 'activations' || u.what === k || (k === 'costUsd' && u.what === 'tokens'),
    ),
  );
  if (open.length > 0) {
    return open.map((u) => ({ node: u.node, tokens: null, costUsd: null, reason: u.reason }));
  }
  // Every node of the worst case that spends, costliest first: where a cut would help most.
  const key = keys[0] as keyof Amounts;
  return bound.nodes
    .filter((n) => n[key] > 0)
    .sort((a, b) => b[key] - a[key])
    .map((n) => ({ node: n.node, tokens: n.tokens, costUsd: n.costUsd }));
}

function worstOf(n: CostlyNode): string {
  return [
    n.tokens !== null && n.tokens > 0 ? `${round(n.tokens)} tokens` : '',
    n.costUsd !== null && n.costUsd > 0 ? `$${round(n.costUsd)}` : '',
  ]
    .filter((s) => s !== '')
    .join(', ');
}

function round(n: number): string {
  return Number.isInteger(n) ? n.toLocaleString('en-US') : String(Number(n.toPrecision(4)));
}
