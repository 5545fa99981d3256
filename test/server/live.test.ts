import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { z } from 'zod';
import { graph, person } from '../../src/index.js';
import { model, scriptedModel } from '../../src/model/index.js';
import { type Served, serve } from '../../src/server.js';
import { SqliteStore } from '../../src/sqlite.js';

// The SSE stream of a run the server drives carries its ephemeral events too (a streaming
// model's deltas), live and without an id, between the recorded events that have one.

const titled = graph('live-title', {
  state: z.object({
    topic: z.string(),
    go: z.boolean().default(false),
    title: z.string().default(''),
  }),
})
  .node('ask', person({ prompt: 'Go?', answer: z.object({ go: z.boolean() }) }))
  .node(
    'name',
    model({
      model: scriptedModel([{ object: { title: 'Tea first' } }], { chunkSize: 4 }),
      prompt: (s) => `Name ${s.topic}`,
      output: z.object({ title: z.string() }),
      stream: true,
    }),
    { writes: ['title'], terminal: true },
  )
  .edge('ask', 'name')
  .entry('ask')
  .compile();

const beating = graph('live-beat', {
  state: z.object({ go: z.boolean().default(false), done: z.boolean().default(false) }),
})
  .node('ask', person({ prompt: 'Go?', answer: z.object({ go: z.boolean() }) }))
  .node(
    'work',
    (_s, ctx) => {
      ctx.heartbeat({ step: 'fetched' });
      return { done: true };
    },
    { terminal: true },
  )
  .edge('ask', 'work')
  .entry('ask')
  .compile();

let dir: string;
let store: SqliteStore;
let served: Served;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'waymark-live-'));
  store = new SqliteStore({ path: join(dir, 'runs.db') });
  served = await serve({ store, graphs: [titled, beating], token: 'tok' });
});
afterAll(async () => {
  await served?.close();
  await store?.close();
  rmSync(dir, { recursive: true, force: true });
});

const headers = { authorization: 'Bearer tok', 'content-type': 'application/json' };

/** Starts `graph` as run `runId`, follows its events, answers its wait, reads to its end. */
async function followAnswered(graphName: string, input: unknown, runId: string) {
  await fetch(`${served.url}/runs`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ graph: graphName, input, runId }),
  });
  for (let i = 0; i < 100 && (await store.getRun(runId))?.status !== 'waiting'; i++)
    await new Promise((resolve) => setTimeout(resolve, 10));
  // Followed across the wait (`until=end`): what is told live comes after it is answered.
  const res = await fetch(`${served.url}/runs/${runId}/events?until=end`, { headers });
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  await fetch(`${served.url}/runs/${runId}/waits/${encodeURIComponent(`${runId}/ask:1`)}/answer`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ answer: { go: true } }),
  });
  let text = '';
  while (!text.includes('"status":"succeeded"')) {
    const { value, done } = await reader.read();
    if (done) break;
    text += value;
  }
  await reader.cancel();
  return text
    .split('\n\n')
    .filter((m) => m.includes('data:'))
    .map((m) => ({
      id: /^id: (.*)$/m.exec(m)?.[1],
      event: /^event: (.*)$/m.exec(m)?.[1],
      data: JSON.parse(/^data: (.*)$/m.exec(m)![1]!),
    }));
}

it('streams a heartbeat live to the SSE clients of the run it drives, without an id', async () => {
  const messages = await followAnswered('live-beat', {}, 'b1');
  const beats = messages.filter((m) => m.event === 'heartbeat');
  expect(beats).toEqual([
    {
      id: undefined,
      event: 'heartbeat',
      data: expect.objectContaining({
        ephemeral: true,
        activation: 'work:1',
        attempt: 1,
        details: { step: 'fetched' },
        at: expect.stringMatching(/Z$/),
      }),
    },
  ]);
  const completed = messages.findIndex((m) => m.event === 'activation.completed');
  expect(messages.indexOf(beats[0]!)).toBeLessThan(completed);
});

it('streams a model node’s deltas to the SSE clients of the run it drives, without ids', async () => {
  const messages = await followAnswered('live-title', { topic: 'tea' }, 'l1');
  const deltas = messages.filter((m) => m.event === 'delta');
  expect(deltas.length).toBeGreaterThan(2);
  expect(deltas.every((m) => m.id === undefined && m.data.ephemeral === true)).toBe(true);
  const streamed = deltas
    .filter((m) => m.data.name === 'model.text')
    .map((m) => m.data.data.delta)
    .join('');
  expect(streamed).toBe(JSON.stringify({ title: 'Tea first' }));
  // Every recorded event has its id; the deltas came before the node's completion.
  const recorded = messages.filter((m) => m.event !== 'delta');
  expect(recorded.every((m) => m.id !== undefined)).toBe(true);
  const completed = messages.findIndex(
    (m) => m.event === 'activation.completed' && m.data.node === 'name',
  );
  expect(messages.findLastIndex((m) => m.event === 'delta')).toBeLessThan(completed);
});
