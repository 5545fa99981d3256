import { WaymarkError } from '../error/waymark-error.js';
import {
  type CallOptions,
  type GenerateResult,
  type LanguageModelV3,
  streamOf,
  usageOf,
} from './spec.js';

/**
 * One scripted answer. `object` is sent as its JSON text; `toolCalls` make the turn a tool
 * turn; `error` makes the call fail as a provider failure would. Token counts default to an
 * estimate (a token per 4 characters of request and answer).
 */
export interface ScriptedReply {
  readonly text?: string;
  readonly object?: unknown;
  readonly toolCalls?: readonly { readonly toolName: string; readonly input: unknown }[];
  readonly usage?: { readonly inputTokens: number; readonly outputTokens: number };
  readonly finishReason?: 'stop' | 'length' | 'content-filter' | 'tool-calls' | 'error' | 'other';
  readonly error?: unknown;
}

/** A scripted answer: its text (JSON, for structured output), or a {@link ScriptedReply}. */
export type ScriptedResponse = string | ScriptedReply;

/** A call a scripted model received, for a script function to answer and a test to assert on. */
export interface ScriptedRequest {
  /** 1 for the model's first call. */
  readonly call: number;
  /** The whole prompt as text, one `role: text` line per message part. */
  readonly text: string;
  /** Names of the tools offered. */
  readonly tools: readonly string[];
  /** The call exactly as the AI SDK made it (prompt, responseFormat, settings). */
  readonly options: CallOptions;
}

/** A scripted model: an AI SDK model that answers from a script and keeps what it was asked. */
export interface ScriptedModel extends LanguageModelV3 {
  readonly requests: readonly ScriptedRequest[];
}

/** Options of {@link scriptedModel}. */
export interface ScriptedModelOptions {
  /** The model id in `scripted:<id>`, which usage and the trace show. Default `model`. */
  readonly modelId?: string;
  /**
   * Streamed (`streamText`, a node with `stream: true`), each reply's text comes in pieces of
   * this many characters, as a provider's tokens would. Default: in one piece.
   */
  readonly chunkSize?: number;
}

/**
 * A model for tests: answers each call with the next response of the list (or what the
 * function returns for the request), through the same AI SDK path as a real provider.
 *
 * @example
 * const m = scriptedModel([{ object: { title: 'x' } }]);
 * .node('draft', model({ model: m, prompt: (s) => s.topic, output: z.object({ title: z.string() }) }))
 */
export function scriptedModel(
  script:
    | readonly ScriptedResponse[]
    | ((request: ScriptedRequest) => ScriptedResponse | Promise<ScriptedResponse>),
  options: ScriptedModelOptions = {},
): ScriptedModel {
  const requests: ScriptedRequest[] = [];
  const doGenerate = async (call: CallOptions): Promise<GenerateResult> => {
    const { abortSignal: _signal, ...rest } = call;
    const request: ScriptedRequest = {
      call: requests.length + 1,
      text: promptText(call.prompt),
      tools: (call.tools ?? []).map((t) => t.name),
      options: rest,
    };
    requests.push(request);
    const response = await next(script, request);
    return answer(typeof response === 'string' ? { text: response } : response, request);
  };
  return {
    specificationVersion: 'v3',
    provider: 'scripted',
    modelId: options.modelId ?? 'model',
    supportedUrls: {},
    requests,
    doGenerate,
    doStream: async (call) => streamOf(await doGenerate(call), options.chunkSize),
  };
}

async function next(
  script:
    | readonly ScriptedResponse[]
    | ((request: ScriptedRequest) => ScriptedResponse | Promise<ScriptedResponse>),
  request: ScriptedRequest,
): Promise<ScriptedResponse> {
  if (typeof script === 'function') return script(request);
  const response = script[request.call - 1];
  if (response === undefined) {
    throw new WaymarkError(
      'SCRIPT_EXHAUSTED',
      `the scripted model has ${script.length} response(s) and was called a ${request.call}th time`,
      { retryable: false, details: { responses: script.length, call: request.call } },
    );
  }
  return response;
}

function answer(reply: ScriptedReply, request: ScriptedRequest): GenerateResult {
  if (reply.error !== undefined) throw reply.error;
  const text = reply.object !== undefined ? JSON.stringify(reply.object) : (reply.text ?? '');
  const content: GenerateResult['content'] = [];
  if (text) content.push({ type: 'text', text });
  (reply.toolCalls ?? []).forEach((c, i) => {
    content.push({
      type: 'tool-call',
      toolCallId: `call-${request.call}-${i + 1}`,
      toolName: c.toolName,
      input: JSON.stringify(c.input ?? {}),
    });
  });
  const unified = reply.finishReason ?? (reply.toolCalls?.length ? 'tool-calls' : 'stop');
  const produced = text + JSON.stringify(reply.toolCalls ?? '');
  return {
    content,
    finishReason: { unified, raw: unified },
    usage: usageOf(
      reply.usage?.inputTokens ?? estimate(request.text),
      reply.usage?.outputTokens ?? estimate(produced),
    ),
    warnings: [],
  };
}

const estimate = (text: string) => Math.max(1, Math.ceil(text.length / 4));

/**
 * The prompt as text: `role: text` per part; tool calls and results as JSON.
 *
 * @example
 * promptText([{ role: 'user', content: [{ type: 'text', text: 'hi' }] }]) // 'user: hi'
 */
export function promptText(prompt: CallOptions['prompt']): string {
  const lines: string[] = [];
  for (const message of prompt) {
    if (typeof message.content === 'string') {
      lines.push(`${message.role}: ${message.content}`);
      continue;
    }
    for (const part of message.content) {
      if (part.type === 'text' || part.type === 'reasoning')
        lines.push(`${message.role}: ${part.text}`);
      else if (part.type === 'tool-call')
        lines.push(`${message.role}: call ${part.toolName} ${JSON.stringify(part.input)}`);
      else if (part.type === 'tool-result')
        lines.push(`${message.role}: result ${part.toolName} ${JSON.stringify(part.output)}`);
    }
  }
  return lines.join('\n');
}
