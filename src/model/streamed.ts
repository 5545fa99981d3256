import type * as Ai from 'ai';
import type { NodeContext } from '../graph/types.js';

/** What a model call gives back to its conversation: the parsed output, as `generateText`'s. */
export interface CallResult {
  readonly output: unknown;
}

const live = { ephemeral: true } as const;

/**
 * One model call through `streamText`, for a node declared with `stream: true`: the same call
 * `generateText` makes (the same steps, tokens and output, the same errors), and as it streams
 * the node emits, as ephemeral events its run's live watchers see and nothing records,
 * `model.text` ({ delta }) for each piece of text, `model.partial` ({ object }) each time the
 * JSON so far parses to a new partial object, and `model.tool-call` ({ tool, input }).
 */
export async function streamedCall(
  ai: typeof Ai,
  args: Parameters<typeof Ai.streamText>[0],
  ctx: NodeContext,
): Promise<CallResult> {
  // Errors come back through `output` and the stream's error part; no console noise.
  const result = ai.streamText({ ...args, onError: () => {} });
  let text = '';
  let partial = '';
  for await (const part of result.fullStream) {
    if (part.type === 'start-step') {
      text = '';
      partial = '';
    } else if (part.type === 'text-delta') {
      text += part.text;
      ctx.emit('model.text', { delta: part.text }, live);
      const parsed = await ai.parsePartialJson(text);
      const json = JSON.stringify(parsed.value ?? null);
      const usable = parsed.state === 'repaired-parse' || parsed.state === 'successful-parse';
      if (usable && typeof parsed.value === 'object' && parsed.value !== null && json !== partial) {
        partial = json;
        ctx.emit('model.partial', { object: parsed.value }, live);
      }
    } else if (part.type === 'tool-call') {
      ctx.emit('model.tool-call', { tool: part.toolName, input: part.input }, live);
    } else if (part.type === 'error') {
      throw part.error;
    }
  }
  return { output: await result.output };
}
