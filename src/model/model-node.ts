import type { ModelMessage, ToolSet } from 'ai';
import { z } from 'zod';
import { WaymarkError } from '../error/waymark-error.js';
import { markKind, markRate, markSpend } from '../graph/kinds.js';
import type { NodeContext, NodeFn, RateLimit, SpendLimits } from '../graph/types.js';
import { applyChecks, type ItemChecks, type OutputCheck, type Quarantined } from './checks.js';
import { type Conversation, converse } from './converse.js';
import { Meter, type PriceTable } from './meter.js';
import { modelName, type ResolveOptions, resolveModel } from './providers.js';
import type { LanguageModelV3, ModelRef } from './spec.js';

/**
 * Options of {@link model}. `S` is the graph's state, `O` the output the schema describes.
 */
export interface ModelOptions<S, O> {
  /** An AI SDK model object, or `provider:model-id`; the run's `model` option overrides it. */
  readonly model: ModelRef;
  /** The system prompt. */
  readonly system?: string | ((state: Readonly<S>) => string);
  /** The request: a user message, or the whole list of messages. */
  readonly prompt: (state: Readonly<S>, ctx: NodeContext) => string | readonly ModelMessage[];
  /** The output's schema; the model is asked for JSON matching it. */
  readonly output: z.ZodType<O>;
  /** Reasons to quarantine the whole output (after `checkItems`); empty: it passes. */
  readonly check?: OutputCheck<O, S>;
  /** Reasons per item of the output's list fields; failing items are quarantined one by one. */
  readonly checkItems?: ItemChecks<O, S>;
  /**
   * Turns the checked output into the update; by default the output is the update. `call` says
   * which model answered and what the checks set aside (to count it, or to note it in state).
   */
  readonly update?: (
    output: O,
    state: Readonly<S>,
    call: ModelCall,
  ) => Partial<NoInfer<S>> | undefined;
  /** Most input + output tokens over all the node's calls in one attempt. */
  readonly maxTokens?: number;
  /** Most cost (US dollars) over all the node's calls in one attempt; needs a price for its model. */
  readonly maxCostUsd?: number;
  /** Prices per model name, for the cost in usage and cost budgets. */
  readonly prices?: PriceTable;
  /** Most replies that may fail the schema (each retry carries the error). Default 3. */
  readonly maxAttempts?: number;
  readonly temperature?: number;
  /** Passed to the provider as its output limit (lowered to what `maxTokens` leaves). */
  readonly maxOutputTokens?: number;
  /** Where a model name's key and provider package come from; default `process.env`, `import()`. */
  readonly resolve?: ResolveOptions;
  /**
   * Stream the reply (`streamText`): as it arrives the node emits `model.text` deltas,
   * `model.partial` objects and `model.tool-call`s as ephemeral events, which the run's live
   * watchers see and nothing records; the checked output is the update as without it.
   */
  readonly stream?: boolean;
  /**
   * The provider's quota this node's attempts count against, shared by every node, run and
   * worker naming the same `resource` (see NodeOptions.rateLimit); `maxTokens` is reserved per
   * attempt, then replaced by what the calls used.
   */
  readonly rateLimit?: RateLimit;
}

/** The node function a model() or agent() declaration becomes. */
// NoInfer: the state type comes from where the node is used (its state parameter), never from
// the narrower update type `.node()` expects when it declares `writes`.
export type ModelNode<S> = NodeFn<S, Partial<NoInfer<S>>>;

/**
 * A node that asks a model for structured output: the reply is validated against `output`
 * (retried with the validation error attached, up to `maxAttempts`), checked by `check` and
 * `checkItems` (what fails goes to the run's quarantine), and becomes the node's update.
 *
 * @example
 * .node('summarize', model({
 *   model: 'openai:gpt-4o-mini',
 *   prompt: (s) => `Summarize in one line:\n${s.text}`,
 *   output: z.object({ summary: z.string() }),
 * }), { writes: ['summary'] }) // kind 'model' comes with it
 */
export function model<S = Record<string, unknown>, O = Record<string, unknown>>(
  options: ModelOptions<S, O>,
): ModelNode<S> {
  const maxAttempts = declared(options);
  const node: ModelNode<S> = (state, ctx) =>
    runModelNode(options, state, ctx, { maxAttempts, maxTurns: maxAttempts, tools: undefined });
  return withRate(markSpend(markKind(node, 'model'), spendLimits(options, maxAttempts)), options);
}

/** The node function, marked with the declaration's rate limit if it has one. */
export function withRate<F extends (...args: never[]) => unknown>(
  fn: F,
  options: { readonly rateLimit?: RateLimit },
): F {
  return options.rateLimit === undefined ? fn : markRate(fn, options.rateLimit);
}

/** What one attempt may spend, as the cost bound reads it: every call counts against `maxTokens`. */
export function spendLimits<S, O>(options: ModelOptions<S, O>, calls: number): SpendLimits {
  const spend: { -readonly [K in keyof SpendLimits]: SpendLimits[K] } = { calls };
  if (options.maxTokens !== undefined) spend.maxTokens = options.maxTokens;
  if (options.maxOutputTokens !== undefined) spend.maxOutputTokens = options.maxOutputTokens;
  if (options.maxCostUsd !== undefined) spend.maxCostUsd = options.maxCostUsd;
  if (options.prices !== undefined) spend.prices = options.prices;
  return spend;
}

/** Checks a declaration's options once, where the mistake is made; returns `maxAttempts`. */
export function declared<S, O>(options: ModelOptions<S, O>): number {
  const bad = (what: string) =>
    new WaymarkError('DECLARATION_INVALID', `model node: ${what}`, { retryable: false });
  if (!(options?.output instanceof z.ZodType)) throw bad('output must be a zod schema');
  if (typeof options.prompt !== 'function') throw bad('prompt must be a function of the state');
  for (const key of ['maxTokens', 'maxCostUsd', 'maxOutputTokens'] as const) {
    const v = options[key];
    if (v !== undefined && !(typeof v === 'number' && v > 0)) throw bad(`${key} must be > 0`);
  }
  const maxAttempts = options.maxAttempts ?? 3;
  if (!Number.isInteger(maxAttempts) || maxAttempts < 1)
    throw bad('maxAttempts must be a whole number >= 1');
  return maxAttempts;
}

/** One attempt of a model or agent node: call, validate, check, update. */
export async function runModelNode<S, O>(
  options: ModelOptions<S, O>,
  state: Readonly<S>,
  ctx: NodeContext,
  loop: {
    maxAttempts: number;
    maxTurns: number;
    /** The tools, or how to make them once the attempt's meter exists (an agent's tool budget). */
    tools: ToolSet | ((meter: Meter) => AgentTools) | undefined;
    maxToolCalls?: number | undefined;
  },
): Promise<Partial<S> | undefined> {
  const ref: ModelRef = ctx.model ?? options.model;
  const name = modelName(ref);
  const meter = new Meter(
    ctx,
    name,
    {
      maxTokens: options.maxTokens,
      maxCostUsd: options.maxCostUsd,
      maxToolCalls: loop.maxToolCalls,
    },
    options.prices,
  );
  meter.assertRoom();
  const made = typeof loop.tools === 'function' ? loop.tools(meter) : undefined;
  const tools = made?.tools ?? (loop.tools as ToolSet | undefined);
  const resolved =
    typeof ref === 'string' ? await resolveModel(ref, options.resolve) : (ref as LanguageModelV3);
  const prompt = options.prompt(state, ctx);
  const system = typeof options.system === 'function' ? options.system(state) : options.system;
  const output = await converse({
    ctx,
    model: resolved,
    system,
    messages: typeof prompt === 'string' ? [{ role: 'user', content: prompt }] : prompt,
    output: options.output,
    ...(tools && { tools }),
    ...(made?.turnTools && { turnTools: made.turnTools }),
    maxTurns: loop.maxTurns,
    maxAttempts: loop.maxAttempts,
    meter,
    maxTokens: options.maxTokens,
    maxOutputTokens: options.maxOutputTokens,
    temperature: options.temperature,
    ...(options.stream === true && { stream: true }),
  });
  const { kept, quarantined } = await applyChecks(
    output,
    state,
    ctx,
    options.check,
    options.checkItems,
  );
  if (kept === undefined) return undefined;
  return options.update
    ? options.update(kept, state, { ctx, model: name, quarantined })
    : (kept as Partial<S>);
}

/** An agent attempt's tools, and what its turns record of their calls (see tool-calls.ts). */
export interface AgentTools {
  readonly tools: ToolSet;
  readonly turnTools?: Conversation<unknown>['turnTools'];
}

/** What a model node's `update` learns about the call besides the output. */
export interface ModelCall {
  readonly ctx: NodeContext;
  /** The model that answered, as `provider:model-id` (the run's `--model` when one was given). */
  readonly model: string;
  /** What `checkItems` and `check` set aside into the run's quarantine, in order. */
  readonly quarantined: Quarantined;
}
