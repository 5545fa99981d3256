import { type FakeOpenAI, fakeOpenAI } from '../model/fake-openai.js';

/** One message of a chat completion request. */
interface Message {
  readonly role: string;
  readonly content: string | readonly { readonly type: string; readonly text?: string }[];
}

/**
 * A local OpenAI-compatible endpoint (test/model/fake-openai.ts) that answers each chat
 * completion with the JSON `respond(system, user)` returns, from the request's system message
 * and first user message: an example's scripted logic served over real HTTP, so a graph run
 * through the `openai-compatible:` provider takes the scripted run's path. Usage is a token per
 * 4 characters each way, as the scripted model counts. Every request must ask for a JSON schema
 * (`response_format: json_schema`), as model nodes do; one that does not gets a 400.
 *
 * @example
 * const server = await scriptedOpenAI(respond);
 * vi.stubEnv('WAYMARK_OPENAI_BASE_URL', server.baseUrl);
 */
export function scriptedOpenAI(
  respond: (system: string, user: string) => unknown,
): Promise<FakeOpenAI> {
  return fakeOpenAI((body) => {
    const format = body.response_format as { type?: string } | undefined;
    if (format?.type !== 'json_schema')
      return { status: 400, error: 'this fake answers structured output only' };
    const messages = (body.messages ?? []) as Message[];
    const system = messages
      .filter((m) => m.role === 'system')
      .map(textOf)
      .join('\n');
    const user = textOf(messages.find((m) => m.role === 'user') ?? { role: 'user', content: '' });
    const content = JSON.stringify(respond(system, user));
    return {
      content,
      usage: { prompt: tokens(system) + tokens(user), completion: tokens(content) },
    };
  });
}

function textOf(message: Message): string {
  return typeof message.content === 'string'
    ? message.content
    : message.content.map((p) => p.text ?? '').join('');
}

const tokens = (text: string) => Math.max(1, Math.ceil(text.length / 4));
