import { WaymarkError } from '../error/waymark-error.js';
import type { Amounts } from './amounts.js';

const scale: Readonly<Record<string, number>> = { '': 1, k: 1e3, m: 1e6 };

/**
 * A budget as the CLI takes it: dollars (`2usd`, `$2`, `0.50usd`), tokens (`40000tokens`,
 * `40k tokens`, `1.5m tokens`), or both, comma-separated.
 * @throws WaymarkError `USAGE_INVALID` for anything else.
 *
 * @example
 * parseBudget('2usd');             // { maxCostUsd: 2 }
 * parseBudget('$0.50, 40k tokens'); // { maxCostUsd: 0.5, maxTokens: 40000 }
 */
export function parseBudget(text: string): {
  readonly maxTokens?: number;
  readonly maxCostUsd?: number;
} {
  const limits: { maxTokens?: number; maxCostUsd?: number } = {};
  for (const part of text.split(',').map((p) => p.trim().toLowerCase())) {
    const dollars = /^\$?(\d+(?:\.\d+)?)\s*(?:usd|\$)?$/.exec(part);
    const tokens = /^(\d+(?:\.\d+)?)\s*([km]?)\s*tokens?$/.exec(part);
    if (tokens) limits.maxTokens = Number(tokens[1]) * scale[tokens[2]!]!;
    else if (dollars && (part.startsWith('$') || part.endsWith('usd') || part.endsWith('$')))
      limits.maxCostUsd = Number(dollars[1]);
    else
      throw new WaymarkError(
        'USAGE_INVALID',
        `--budget ${JSON.stringify(text)}: give dollars (2usd, $0.50) or tokens (40000tokens, 40k tokens), comma-separated`,
        { retryable: false },
      );
  }
  for (const v of Object.values(limits)) {
    if (!(v > 0))
      throw new WaymarkError('USAGE_INVALID', `--budget ${JSON.stringify(text)}: must be > 0`, {
        retryable: false,
      });
  }
  return limits;
}

/** A worst case in one line: `4 executions, 12 model calls, 39,000 tokens, $0.0059`. */
export function describeAmounts(a: Amounts): string {
  const n = (v: number) => (v === Infinity ? 'unbounded' : v.toLocaleString('en-US'));
  const usd = a.costUsd === Infinity ? 'unbounded cost' : `$${Number(a.costUsd.toPrecision(3))}`;
  return `${n(a.attempts)} executions, ${n(a.modelCalls)} model calls, ${n(a.tokens)} tokens (${n(a.inputTokens)} in, ${n(a.outputTokens)} out), ${usd}`;
}
