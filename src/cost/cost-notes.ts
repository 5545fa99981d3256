import type { CostOverlay } from '../graph/render.js';
import type { Amounts } from './amounts.js';
import type { Bound } from './bound.js';

/** Recorded spend, as `expectedCost` (waymark's runtime) gives it per node and run. */
interface Cost {
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly costUsd: number;
}

/** The part of `expectedCost`'s answer the notes read. */
export interface ExpectedNotes {
  readonly nodes: readonly { readonly node: string; readonly perRun: Cost }[];
}

/**
 * What `waymark graph --cost` and the web page write under each node: its worst case (`≤ 4×`
 * its activations, then the model calls, tokens and cost it can spend, `∞` where the bound has
 * none), and what it is expected to spend in a run (`~ 6.2k tok · $0.0041`, the median of
 * earlier runs' recorded usage) when there is any; with the worst case's path to draw.
 *
 * @example
 * renderGraph(graph.def, { cost: costNotes(boundOf(graph), await expectedCost(store, graph)) });
 */
export function costNotes(bound: Bound, expected?: ExpectedNotes): CostOverlay {
  const notes: Record<string, string> = {};
  for (const node of bound.nodes) notes[node.node] = worstText(node);
  for (const node of expected?.nodes ?? []) {
    const text = expectedText(node.perRun);
    if (text !== undefined)
      notes[node.node] = notes[node.node] === undefined ? text : `${notes[node.node]} · ${text}`;
  }
  return { notes, worst: bound.path.map((step) => step.node) };
}

function worstText(a: Amounts): string {
  const parts = [`≤ ${count(a.activations)}×`];
  if (a.modelCalls > 0) parts.push(`${count(a.modelCalls)} calls`);
  if (a.tokens > 0) parts.push(`${count(a.tokens)} tok`);
  if (a.costUsd > 0) parts.push(usd(a.costUsd));
  return parts.join(' · ');
}

function expectedText(cost: Cost): string | undefined {
  const tokens = cost.inputTokens + cost.outputTokens;
  if (tokens === 0 && cost.costUsd === 0) return undefined;
  return `~ ${[...(tokens > 0 ? [`${count(tokens)} tok`] : []), ...(cost.costUsd > 0 ? [usd(cost.costUsd)] : [])].join(' · ')}`;
}

const count = (n: number) =>
  n === Number.POSITIVE_INFINITY
    ? '∞'
    : n >= 10_000
      ? `${Math.round(n / 1_000)}k`
      : n >= 1_000
        ? `${Number((n / 1_000).toFixed(1))}k`
        : String(n);

const usd = (n: number) => (n === Number.POSITIVE_INFINITY ? '$∞' : `$${Number(n.toPrecision(2))}`);
