import { kindTraits } from '../graph/kinds.js';
import type { NodeDef } from '../graph/types.js';

/** What a run (or one node of it) can spend at most. Infinity: no bound, see `unbounded`. */
export interface Amounts {
  /** Activations: a node's runs, each counted once however many attempts it takes. */
  readonly activations: number;
  /** Node executions: every attempt of every activation (what the body is called for). */
  readonly attempts: number;
  readonly modelCalls: number;
  readonly inputTokens: number;
  readonly outputTokens: number;
  /** Input + output tokens. */
  readonly tokens: number;
  readonly costUsd: number;
}

export const metrics = [
  'activations',
  'attempts',
  'modelCalls',
  'inputTokens',
  'outputTokens',
  'tokens',
  'costUsd',
] as const satisfies readonly (keyof Amounts)[];

/** A part of a graph the bound cannot count, and why. */
export interface Unbounded {
  readonly node: string;
  /** What has no bound there. */
  readonly what: 'activations' | 'modelCalls' | 'tokens' | 'costUsd';
  readonly reason: string;
}

export const zero: Amounts = {
  activations: 0,
  attempts: 0,
  modelCalls: 0,
  inputTokens: 0,
  outputTokens: 0,
  tokens: 0,
  costUsd: 0,
};

/** `a * b` where nothing times no bound is nothing (a node that spends no tokens, unbounded times). */
export function times(a: number, b: number): number {
  return a === 0 || b === 0 ? 0 : a * b;
}

export function plus(a: Amounts, b: Amounts): Amounts {
  const out = { ...zero } as Record<keyof Amounts, number>;
  for (const m of metrics) out[m] = a[m] + b[m];
  return out;
}

export function scaled(a: Amounts, by: number): Amounts {
  const out = { ...zero } as Record<keyof Amounts, number>;
  for (const m of metrics) out[m] = times(a[m], by);
  return out;
}

/**
 * What one activation of a node can spend: its attempts (the retry policy, where its kind is
 * retried), and per attempt its declared spend limits. A model node that declares no
 * `maxTokens` is unbounded in tokens; a code, effect or person node spends no model tokens
 * unless it declares `spend` (a node that reports usage without declaring it is what the bound
 * cannot see: docs/cost.md).
 */
export function perActivation(node: NodeDef, unbounded: Unbounded[]): Amounts {
  const attempts = kindTraits[node.kind]?.retryable ? (node.retry?.attempts ?? 1) : 1;
  const spend = node.spend;
  const model = node.kind === 'model';
  const note = (what: Unbounded['what'], reason: string) =>
    unbounded.push({ node: node.name, what, reason });
  let calls = spend?.calls ?? (model ? Infinity : 0);
  if (calls === Infinity) note('modelCalls', 'a model node that declares no spend.calls');
  const maxTokens = spend?.maxTokens;
  let tokens: number;
  let input: number;
  let output: number;
  if (maxTokens !== undefined) {
    tokens = input = maxTokens;
    const perCall = spend?.maxOutputTokens;
    output = perCall === undefined ? maxTokens : Math.min(maxTokens, times(calls, perCall));
  } else if (model || calls > 0) {
    tokens = input = Infinity;
    output = spend?.maxOutputTokens === undefined ? Infinity : times(calls, spend.maxOutputTokens);
    note('tokens', 'no maxTokens declared for its attempts');
  } else {
    tokens = input = output = 0;
    calls = 0;
  }
  let cost = spend?.maxCostUsd ?? Infinity;
  const prices = Object.values(spend?.prices ?? {});
  if (prices.length > 0 && tokens < Infinity) {
    const perToken = Math.max(
      ...prices.map((p) => Math.max(p.inputPerMillion, p.outputPerMillion)),
    );
    cost = Math.min(cost, (tokens * perToken) / 1e6);
  }
  if (tokens === 0) cost = spend?.maxCostUsd ?? 0;
  if (cost === Infinity) note('costUsd', 'no maxCostUsd declared, and no prices with maxTokens');
  return {
    activations: 1,
    attempts,
    modelCalls: times(attempts, calls),
    inputTokens: times(attempts, input),
    outputTokens: times(attempts, output),
    tokens: times(attempts, tokens),
    costUsd: times(attempts, cost),
  };
}
