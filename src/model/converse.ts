import type * as Ai from 'ai';
import type { ModelMessage, ToolSet } from 'ai';
import type { z } from 'zod';
import { thrownData } from '../error/thrown-data.js';
import { isWaymarkError, WaymarkError } from '../error/waymark-error.js';
import type { NodeContext, ToolCallRecord } from '../graph/types.js';
import { admissionOf } from '../runtime/attempt/call-admission.js';
import { budgetError, type Meter } from './meter.js';
import type { LanguageModelV3 } from './spec.js';
import { streamedCall } from './streamed.js';

/** One model conversation inside an attempt: model() has no tools, agent() has some. */
export interface Conversation<O> {
  readonly ctx: NodeContext;
  readonly model: Exclude<Parameters<typeof Ai.generateText>[0]['model'], string>;
  readonly system: string | undefined;
  readonly messages: readonly ModelMessage[];
  readonly output: z.ZodType<O>;
  readonly tools?: ToolSet;
  /** Most model calls (turns) in all; a tool loop ends at it. */
  readonly maxTurns: number;
  /** Most replies that may fail the schema before the node gives up. */
  readonly maxAttempts: number;
  readonly meter: Meter;
  readonly maxTokens: number | undefined;
  readonly maxOutputTokens: number | undefined;
  readonly temperature: number | undefined;
  /** Call through `streamText`, emitting deltas as ephemeral events (see streamed.ts). */
  readonly stream?: boolean;
  /** What a turn's trace entry records of its tool calls (an agent's MCP tools), if anything. */
  readonly turnTools?: (
    calls: readonly {
      readonly toolCallId: string;
      readonly toolName: string;
      readonly input: unknown;
    }[],
  ) => readonly ToolCallRecord[];
}

/**
 * Calls the model until its reply matches the output schema: each reply that does not is
 * answered with the validation error, up to `maxAttempts` replies. Every call's tokens are booked
 * as it finishes and every call is a turn in the trace; budgets are checked before each call
 * and after it.
 */
export async function converse<O>(c: Conversation<O>): Promise<O> {
  const { ctx, meter } = c;
  const ai = await loadAi();
  const { generateText, NoObjectGeneratedError, NoOutputGeneratedError, Output, stepCountIs } = ai;
  let messages = [...c.messages];
  let turns = 0;
  let invalid = 0;
  // The attempt's admission covered its first call; every later one is a request of its own.
  const admit = admissionOf(ctx);
  let calls = 0;
  const prepareStep = admit && (async () => void (++calls > 1 && (await admit(calls))));
  for (;;) {
    meter.assertRoom();
    let started = performance.now();
    let lastMessages: readonly ModelMessage[] = [];
    let lastFinish = '';
    let failure: unknown;
    let output: O | undefined;
    try {
      const args = {
        model: c.model,
        ...(c.system !== undefined && { system: c.system }),
        messages,
        ...(c.tools && { tools: c.tools }),
        output: Output.object({ schema: c.output }),
        stopWhen: [stepCountIs(c.maxTurns - turns), () => meter.passed()],
        // Retries belong to the node's retry policy, where the trace shows them.
        maxRetries: 0,
        abortSignal: ctx.signal,
        ...(prepareStep && { prepareStep }),
        ...(c.temperature !== undefined && { temperature: c.temperature }),
        ...outputLimit(c, meter),
        onStepFinish: (step) => {
          turns++;
          const usage = meter.record(step.usage.inputTokens ?? 0, step.usage.outputTokens ?? 0);
          const now = performance.now();
          const toolCalls = step.toolCalls.map((call) => call.toolName);
          const tools = c.turnTools?.(step.toolCalls) ?? [];
          ctx.turn({
            turn: turns,
            durationMs: Math.round(now - started),
            usage,
            ...(toolCalls.length > 0 && { toolCalls }),
            ...(tools.length > 0 && { tools }),
          });
          started = now;
          lastMessages = step.response.messages;
          lastFinish = step.finishReason;
        },
      } satisfies Parameters<typeof generateText>[0];
      const result = c.stream ? await streamedCall(ai, args, ctx) : await generateText(args);
      output = result.output as O;
    } catch (error) {
      failure = error;
    }
    // What was spent counts before what was said: past a budget, no answer is kept.
    meter.assertWithin();
    if (failure === undefined) return output as O;
    if (NoOutputGeneratedError.isInstance(failure) && lastFinish === 'tool-calls') {
      throw budgetError(ctx.node, { limit: 'node.maxTurns', max: c.maxTurns, spent: turns });
    }
    if (!NoObjectGeneratedError.isInstance(failure) && !NoOutputGeneratedError.isInstance(failure))
      throw callError(ai, failure, ctx, c.model);
    invalid++;
    const reason = schemaReason(ai, failure);
    const text = NoObjectGeneratedError.isInstance(failure) ? failure.text : undefined;
    if (invalid >= c.maxAttempts) {
      throw new WaymarkError(
        'MODEL_OUTPUT_INVALID',
        `node "${ctx.node}": the model's output did not match the output schema after ${invalid} attempt(s): ${reason}`,
        {
          errorClass: 'check',
          retryable: false,
          cause: failure,
          details: { attempts: invalid, error: reason, text },
        },
      );
    }
    if (turns >= c.maxTurns) {
      throw budgetError(ctx.node, { limit: 'node.maxTurns', max: c.maxTurns, spent: turns });
    }
    const reply: readonly ModelMessage[] =
      lastMessages.length > 0 ? lastMessages : [{ role: 'assistant', content: text ?? '' }];
    messages = [
      ...messages,
      ...reply,
      {
        role: 'user',
        content: `Your reply did not match the required JSON schema: ${reason}\nReply again with only the corrected JSON object.`,
      },
    ];
  }
}

let sdk: Promise<typeof Ai> | undefined;

/**
 * The AI SDK, loaded at the first model call: `ai` is an optional peer, so waymark/model imports
 * (and its scripted and record/replay helpers load) in a project that has not installed it.
 * @throws WaymarkError `MODEL_PROVIDER_MISSING` when it is not installed.
 */
function loadAi(): Promise<typeof Ai> {
  sdk ??= import('ai').catch((cause: unknown) => {
    sdk = undefined;
    const code = (cause as { code?: unknown }).code;
    if (code !== 'ERR_MODULE_NOT_FOUND' || !String(cause).includes("'ai'")) throw cause;
    throw new WaymarkError(
      'MODEL_PROVIDER_MISSING',
      'model nodes call their model through the AI SDK, and its package is not installed: npm install ai@6',
      { retryable: false, cause },
    );
  });
  return sdk;
}

// A node token budget caps the reply too: the model cannot usefully write more than is left.
function outputLimit<O>(c: Conversation<O>, meter: Meter): { maxOutputTokens?: number } {
  const left = c.maxTokens === undefined ? undefined : Math.max(1, c.maxTokens - meter.tokens);
  const limit = left === undefined ? c.maxOutputTokens : Math.min(left, c.maxOutputTokens ?? left);
  return limit === undefined ? {} : { maxOutputTokens: limit };
}

function schemaReason(ai: typeof Ai, error: unknown): string {
  if (ai.NoOutputGeneratedError.isInstance(error)) return 'the reply held no JSON object';
  const cause = (error as { cause?: unknown }).cause;
  const message = cause instanceof Error ? cause.message : (error as Error).message;
  return message.replace(/\s+/g, ' ').trim();
}

/** A provider failure as a waymark error: transient when trying again may help. */
function callError(ai: typeof Ai, error: unknown, ctx: NodeContext, model: unknown): unknown {
  const { APICallError, LoadAPIKeyError, RetryError } = ai;
  // A cancelled run or a node timeout: the runtime reports that itself.
  if (ctx.signal.aborted || isWaymarkError(error)) return error;
  const last = RetryError.isInstance(error) ? error.lastError : error;
  if (isWaymarkError(last)) return last;
  const name = describe(model);
  if (LoadAPIKeyError.isInstance(last)) {
    return new WaymarkError('MODEL_KEY_MISSING', `model ${name}: ${last.message}`, {
      retryable: false,
      cause: last,
    });
  }
  const status = APICallError.isInstance(last) ? last.statusCode : undefined;
  const retryable = APICallError.isInstance(last) ? last.isRetryable : true;
  const message = last instanceof Error ? last.message : String(last);
  return new WaymarkError(
    'MODEL_CALL_FAILED',
    `model ${name} call failed${status ? ` (HTTP ${status})` : ''}: ${message}`,
    // The thrown error's data (status, Retry-After) stays, so the default retry policy and a
    // node's own predicate decide on it as on any node's failure.
    { retryable, cause: last, details: { ...thrownData(last) } },
  );
}

function describe(model: unknown): string {
  const m = model as LanguageModelV3;
  return `"${m.provider?.split('.')[0]}:${m.modelId}"`;
}
