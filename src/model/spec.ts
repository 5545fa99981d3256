import type { LanguageModel } from 'ai';

// The provider specification types, taken from `ai` itself so that waymark/model needs no
// direct dependency on `@ai-sdk/provider` (whose version `ai` pins).

/** A language model object as the AI SDK's providers make them (specification v3). */
export type LanguageModelV3 = Extract<LanguageModel, { readonly specificationVersion: 'v3' }>;
/** What the AI SDK asks a model for: prompt, tools, response format, settings. */
export type CallOptions = Parameters<LanguageModelV3['doGenerate']>[0];
/** What a model answers one call with. */
export type GenerateResult = Awaited<ReturnType<LanguageModelV3['doGenerate']>>;
type StreamResult = Awaited<ReturnType<LanguageModelV3['doStream']>>;
type StreamPart = StreamResult['stream'] extends ReadableStream<infer P> ? P : never;

/**
 * A model node's model: an AI SDK language model object, or its name as `provider:model-id`,
 * resolved when the node runs.
 */
export type ModelRef = string | Exclude<LanguageModel, string>;

/**
 * Replays a finished answer as the stream the AI SDK expects from `doStream`, so scripted and
 * recorded models also serve `streamText` callers: its text in one piece, or in pieces of
 * `chunkSize` characters.
 */
export function streamOf(result: GenerateResult, chunkSize?: number): StreamResult {
  const parts: StreamPart[] = [{ type: 'stream-start', warnings: result.warnings }];
  result.content.forEach((part, i) => {
    if (part.type === 'text') {
      const id = `text-${i}`;
      parts.push({ type: 'text-start', id });
      // In pieces of `chunkSize` characters when asked, as a provider streams tokens.
      const size = chunkSize ?? Math.max(1, part.text.length);
      for (let at = 0; at < part.text.length; at += size)
        parts.push({ type: 'text-delta', id, delta: part.text.slice(at, at + size) });
      parts.push({ type: 'text-end', id });
    } else if (part.type === 'tool-call') {
      parts.push(part);
    }
  });
  parts.push({ type: 'finish', usage: result.usage, finishReason: result.finishReason });
  return {
    stream: new ReadableStream<StreamPart>({
      start(controller) {
        for (const part of parts) controller.enqueue(part);
        controller.close();
      },
    }),
  };
}

/** Token counts in the provider shape, from plain input and output totals. */
export function usageOf(inputTokens: number, outputTokens: number): GenerateResult['usage'] {
  return {
    inputTokens: {
      total: inputTokens,
      noCache: inputTokens,
      cacheRead: undefined,
      cacheWrite: undefined,
    },
    outputTokens: { total: outputTokens, text: outputTokens, reasoning: undefined },
  };
}
