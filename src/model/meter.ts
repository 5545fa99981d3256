import { WaymarkError } from '../error/waymark-error.js';
import type { NodeContext, Usage } from '../graph/types.js';

/** What a model costs, in US dollars per million tokens. */
export interface Price {
  readonly inputPerMillion: number;
  readonly outputPerMillion: number;
}

/**
 * Prices by model name (`provider:model-id`); a model without one reports no cost.
 *
 * @example
 * const prices = { 'openai:gpt-4o-mini': { inputPerMillion: 0.15, outputPerMillion: 0.6 } };
 */
export type PriceTable = Readonly<Record<string, Price>>;

/** A model node's own limits, over all its calls in one attempt. */
export interface NodeLimits {
  readonly maxTokens?: number | undefined;
  readonly maxCostUsd?: number | undefined;
  /** Most tool calls an agent makes in one attempt. */
  readonly maxToolCalls?: number | undefined;
}

interface Exceeded {
  readonly limit: string;
  readonly max: number;
  readonly spent: number;
}

/**
 * Counts what one attempt of a model node spends, reports it through `ctx.usage`, and checks it
 * against the node's limits and the run's budget (what the run had spent when the attempt
 * started, plus this attempt).
 */
export class Meter {
  inputTokens = 0;
  outputTokens = 0;
  costUsd = 0;
  /** Tool calls asked for so far, the refused one past the budget included. */
  toolCalls = 0;
  readonly #ctx: NodeContext;
  readonly #model: string;
  readonly #limits: NodeLimits;
  readonly #price: Price | undefined;

  constructor(ctx: NodeContext, model: string, limits: NodeLimits, prices: PriceTable = {}) {
    this.#ctx = ctx;
    this.#model = model;
    this.#limits = limits;
    this.#price = prices[model];
    const costLimited = limits.maxCostUsd !== undefined || ctx.budget.maxCostUsd !== undefined;
    if (costLimited && !this.#price) {
      throw new WaymarkError(
        'MODEL_PRICE_MISSING',
        `node "${ctx.node}" has a cost budget but model "${model}" has no entry in its prices`,
        { retryable: false, details: { model } },
      );
    }
  }

  /** Books one call's tokens: into this attempt's count and, through `ctx.usage`, the trace. */
  record(inputTokens: number, outputTokens: number): Usage {
    const usage: { -readonly [K in keyof Usage]: Usage[K] } = {
      inputTokens,
      outputTokens,
      model: this.#model,
    };
    if (this.#price) {
      usage.costUsd =
        (inputTokens * this.#price.inputPerMillion + outputTokens * this.#price.outputPerMillion) /
        1e6;
      this.costUsd += usage.costUsd;
    }
    this.inputTokens += inputTokens;
    this.outputTokens += outputTokens;
    this.#ctx.usage(usage);
    return usage;
  }

  get tokens(): number {
    return this.inputTokens + this.outputTokens;
  }

  get maxToolCalls(): number | undefined {
    return this.#limits.maxToolCalls;
  }

  /** Counts a tool call the model asked for; false when it is past the budget and must not run. */
  bookToolCall(): boolean {
    this.toolCalls++;
    const max = this.#limits.maxToolCalls;
    return max === undefined || this.toolCalls <= max;
  }

  /** Throws unless something is left of every limit: a call that starts must have room. */
  assertRoom(): void {
    // Tool calls are not a call's room: after its last allowed tool call the model may answer.
    const over = this.#exceeded(
      (spent, max, limit) => spent >= max && limit !== 'node.maxToolCalls',
    );
    if (over) throw budgetError(this.#ctx.node, over);
  }

  /** Throws if a limit has been passed. */
  assertWithin(): void {
    const over = this.#exceeded((spent, max) => spent > max);
    if (over) throw budgetError(this.#ctx.node, over);
  }

  /** True when a limit has been passed: the agent loop stops at the end of the turn. */
  passed(): boolean {
    return this.#exceeded((spent, max) => spent > max) !== undefined;
  }

  #exceeded(over: (spent: number, max: number, limit: string) => boolean): Exceeded | undefined {
    const { spend, budget } = this.#ctx;
    const checks: [string, number | undefined, number][] = [
      ['node.maxTokens', this.#limits.maxTokens, this.tokens],
      ['node.maxCostUsd', this.#limits.maxCostUsd, this.costUsd],
      ['node.maxToolCalls', this.#limits.maxToolCalls, this.toolCalls],
      ['run.maxTokens', budget.maxTokens, spend.inputTokens + spend.outputTokens + this.tokens],
      ['run.maxCostUsd', budget.maxCostUsd, spend.costUsd + this.costUsd],
    ];
    for (const [limit, max, spent] of checks)
      if (max !== undefined && over(spent, max, limit)) return { limit, max, spent };
    return undefined;
  }
}

/** The `BUDGET_EXCEEDED` error for a limit. */
export function budgetError(node: string, over: Exceeded): WaymarkError {
  return new WaymarkError(
    'BUDGET_EXCEEDED',
    `node "${node}" reached its budget ${over.limit} of ${over.max} (spent ${round(over.spent)})`,
    { errorClass: 'budget', retryable: false, details: over },
  );
}

const round = (n: number) => Math.round(n * 1e6) / 1e6;
