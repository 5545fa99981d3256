import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { END, graph, run } from '../../src/index.js';
import {
  type LanguageModelV3,
  model,
  recordModel,
  replayModel,
  resolveModel,
} from '../../src/model/index.js';
import { type FakeOpenAI, fakeOpenAI } from './fake-openai.js';

// The real provider path, end to end and offline: a model node named
// `openai-compatible:<id>` talks HTTP to a local server speaking the OpenAI-compatible API (as
// Ollama and llama.cpp do), through recordModel; then replayModel answers the same run from the
// cassette with the server gone.

const State = z.object({ text: z.string(), summary: z.string().default('') });
const Summary = z.object({ summary: z.string() });

function summarize(m: LanguageModelV3) {
  return graph('summarize', { state: State })
    .node(
      'summarize',
      model({
        model: m,
        system: 'You summarize in one line.',
        prompt: (s) => s.text,
        output: Summary,
        temperature: 0,
      }),
      { kind: 'model', writes: ['summary'] },
    )
    .edge('summarize', END)
    .entry('summarize')
    .compile();
}

let server: FakeOpenAI | undefined;
afterEach(async () => {
  vi.unstubAllEnvs();
  await server?.close();
  server = undefined;
});

describe('a model node over the OpenAI-compatible provider', () => {
  it('records a run against a local endpoint, then replays it offline with the same result', async () => {
    server = await fakeOpenAI(() => ({
      content: JSON.stringify({ summary: 'Tea predates coffee.' }),
      usage: { prompt: 31, completion: 8 },
    }));
    vi.stubEnv('WAYMARK_OPENAI_BASE_URL', server.baseUrl);
    const cassette = join(mkdtempSync(join(tmpdir(), 'waymark-cassette-')), 'summary.json');
    const input = { text: 'Tea was drunk in China long before coffee was brewed anywhere.' };

    const recorded = await run(summarize(recordModel('openai-compatible:tiny', cassette)), input);

    expect(recorded.status).toBe('succeeded');
    expect(recorded.state.summary).toBe('Tea predates coffee.');
    expect(recorded.trace.entries[0]?.usage).toEqual({
      inputTokens: 31,
      outputTokens: 8,
      model: 'openai-compatible:tiny',
    });
    // What went over the wire: the model id, the messages, and the schema as json_schema.
    expect(server.requests).toHaveLength(1);
    expect(server.requests[0]).toMatchObject({
      model: 'tiny',
      temperature: 0,
      messages: [
        { role: 'system', content: 'You summarize in one line.' },
        { role: 'user', content: input.text },
      ],
      response_format: {
        type: 'json_schema',
        json_schema: { schema: { properties: { summary: { type: 'string' } } } },
      },
    });
    const file = JSON.parse(readFileSync(cassette, 'utf8'));
    expect(file.version).toBe(1);
    expect(Object.keys(file.entries)).toHaveLength(1);
    expect(Object.keys(file.entries)[0]).toMatch(/^[0-9a-f]{64}$/);
    expect(Object.values(file.entries)[0]).toMatchObject({ model: 'openai-compatible:tiny' });

    await server.close();
    server = undefined;
    const replayed = await run(summarize(replayModel(cassette)), input);

    expect(replayed.status).toBe('succeeded');
    expect(replayed.state).toEqual(recorded.state);
    expect(replayed.trace.entries[0]?.usage).toEqual(recorded.trace.entries[0]?.usage);
  });

  it('a replay asked something it did not record fails with CASSETTE_MISS and calls nothing', async () => {
    server = await fakeOpenAI(() => ({ content: JSON.stringify({ summary: 'x' }) }));
    vi.stubEnv('WAYMARK_OPENAI_BASE_URL', server.baseUrl);
    const cassette = join(mkdtempSync(join(tmpdir(), 'waymark-cassette-')), 'c.json');
    await run(summarize(recordModel('local:tiny', cassette)), { text: 'one' });

    const result = await run(summarize(replayModel(cassette)), { text: 'two' });

    expect(result.status === 'failed' && result.error).toMatchObject({
      code: 'CASSETTE_MISS',
      class: 'permanent',
    });
    expect(server.requests).toHaveLength(1);
  });

  it('a server error is a transient MODEL_CALL_FAILED the retry policy retries; a 401 is permanent', async () => {
    let calls = 0;
    server = await fakeOpenAI(() => {
      calls++;
      if (calls === 1) return { status: 503, error: 'overloaded' };
      if (calls === 2) return { content: JSON.stringify({ summary: 'ok' }) };
      return { status: 401, error: 'bad key' };
    });
    const m = await resolveModel('openai-compatible:tiny', {
      env: { WAYMARK_OPENAI_BASE_URL: server.baseUrl },
    });
    const g = graph('summarize', { state: State })
      .node('summarize', model({ model: m, prompt: (s) => s.text, output: Summary }), {
        kind: 'model',
        retry: { attempts: 2 },
      })
      .edge('summarize', END)
      .entry('summarize')
      .compile();

    const ok = await run(g, { text: 'x' });
    expect(ok.status).toBe('succeeded');
    expect(ok.trace.entries.map((e) => [e.attempt, e.status, e.error?.code])).toEqual([
      [1, 'failed', 'MODEL_CALL_FAILED'],
      [2, 'succeeded', undefined],
    ]);

    const denied = await run(g, { text: 'x' });
    expect(denied.status === 'failed' && denied.error).toMatchObject({
      code: 'MODEL_CALL_FAILED',
      class: 'permanent',
      details: { status: 401 },
    });
    expect(calls).toBe(3);
  });
});
