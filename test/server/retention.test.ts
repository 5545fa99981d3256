import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { WaymarkClient } from '../../src/client.js';
import { continueThread, graph, isWaymarkError, person, run } from '../../src/index.js';
import { type Served, serve } from '../../src/server.js';
import { SqliteStore } from '../../src/sqlite.js';

// Deleting runs over HTTP: DELETE /runs/:id and DELETE /threads/:id, through waymark/client.

const chat = graph('http-chat', { state: z.object({ turns: z.number().default(0) }) })
  .node('reply', (s) => ({ turns: s.turns + 1 }), { terminal: true })
  .entry('reply')
  .compile();

const asking = graph('http-asking', { state: z.object({ ok: z.boolean().default(false) }) })
  .node('ask', person({ prompt: 'ok?', answer: z.object({ ok: z.boolean() }) }), {
    terminal: true,
  })
  .entry('ask')
  .compile();

const store = new SqliteStore({ path: ':memory:' });
let served: Served;
let client: WaymarkClient;

beforeAll(async () => {
  served = await serve({ store, graphs: [chat, asking], token: 't', wakePollMs: 0 });
  client = new WaymarkClient({ url: served.url, token: 't' });
});
afterAll(async () => {
  await served.close();
  store.close();
});

const code = (p: Promise<unknown>) =>
  p.then(
    () => 'resolved',
    (e: unknown) => (isWaymarkError(e) ? e.code : String(e)),
  );

describe('deleting runs over HTTP', () => {
  it('DELETE /runs/:id deletes a finished run; a waiting one needs ?force=true', async () => {
    await run(chat, {}, { store, runId: 'h1' });
    const gone = await client.deleteRun('h1');
    expect(gone.runs).toEqual([
      { runId: 'h1', graph: 'http-chat', status: 'succeeded', createdAt: expect.any(Number) },
    ]);
    expect(await store.getRun('h1')).toBeUndefined();
    expect(await code(client.deleteRun('h1'))).toBe('RUN_NOT_FOUND');

    await run(asking, {}, { store, runId: 'h2' });
    expect(await code(client.deleteRun('h2'))).toBe('RUN_WAITING');
    expect((await client.deleteRun('h2', { force: true })).runs[0]?.status).toBe('waiting');
  });

  it('a refusal is a 409 with its code, and the wire gives times as ISO strings', async () => {
    await run(asking, {}, { store, runId: 'h3' });
    const res = await fetch(`${served.url}/runs/h3`, {
      method: 'DELETE',
      headers: { authorization: 'Bearer t' },
    });
    expect(res.status).toBe(409);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('RUN_WAITING');
    const forced = await fetch(`${served.url}/runs/h3?force=true`, {
      method: 'DELETE',
      headers: { authorization: 'Bearer t' },
    });
    const body = (await forced.json()) as { runs: { createdAt: string }[] };
    expect(body.runs[0]?.createdAt).toMatch(/^\d{4}-\d\d-\d\dT.*Z$/);
  });

  it('DELETE /threads/:id deletes every run of a thread, newest first', async () => {
    await run(chat, {}, { store, runId: 'th' });
    await continueThread(store, chat, 'th', {}, { runId: 'th-2' });
    await continueThread(store, chat, 'th-2', {}, { runId: 'th-3' });
    const gone = await client.deleteThread('th');
    expect(gone.runs.map((r) => r.runId)).toEqual(['th-3', 'th-2', 'th']);
    expect(await store.listRuns({ graph: 'http-chat' })).toEqual([]);
    expect(await code(client.deleteThread('th'))).toBe('RUN_NOT_FOUND');
  });
});
