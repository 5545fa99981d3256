import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** What the fake endpoint answers one chat completion with. */
export type FakeReply =
  | { readonly content: string; readonly usage?: { prompt: number; completion: number } }
  | { readonly status: number; readonly error: string };

/**
 * A local HTTP server speaking the OpenAI-compatible Chat Completions API
 * (POST /v1/chat/completions), as Ollama or llama.cpp do: enough to prove the real provider path
 * end to end without a network.
 */
export interface FakeOpenAI {
  readonly baseUrl: string;
  /** The JSON bodies of the requests received, in order. */
  readonly requests: Record<string, unknown>[];
  close(): Promise<void>;
}

export async function fakeOpenAI(
  reply: (body: Record<string, unknown>) => FakeReply,
): Promise<FakeOpenAI> {
  const requests: Record<string, unknown>[] = [];
  const server: Server = createServer(async (req, res) => {
    if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
      res.writeHead(404).end();
      return;
    }
    const body = JSON.parse(await read(req)) as Record<string, unknown>;
    requests.push(body);
    const r = reply(body);
    if ('status' in r) {
      res.writeHead(r.status, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: r.error, type: 'server_error' } }));
      return;
    }
    const usage = r.usage ?? { prompt: 21, completion: 7 };
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        id: `chatcmpl-${requests.length}`,
        object: 'chat.completion',
        created: 1_700_000_000,
        model: body.model,
        choices: [
          {
            index: 0,
            message: { role: 'assistant', content: r.content },
            finish_reason: 'stop',
          },
        ],
        usage: {
          prompt_tokens: usage.prompt,
          completion_tokens: usage.completion,
          total_tokens: usage.prompt + usage.completion,
        },
      }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((e) => (e ? reject(e) : resolve()));
      }),
  };
}

async function read(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
