import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { append, graph, person } from '../../src/index.js';
import { type Served, serve } from '../../src/server.js';
import { SqliteStore } from '../../src/sqlite.js';

// `waymark serve`'s API over real HTTP on 127.0.0.1: a run started, streamed to its wait,
// answered, streamed on to its end; a stream resumed with Last-Event-ID; refusals with codes.

const review = graph('api-review', {
  state: z.object({
    title: z.string(),
    notes: z.array(z.string()).default([]),
    approved: z.boolean().default(false),
    published: z.boolean().default(false),
  }),
  reducers: { notes: append },
})
  .node('draft', (s, ctx) => {
    ctx.emit('drafted', { title: s.title });
    return { notes: [`drafted ${s.title}`] };
  })
  .node(
    'review',
    person({ prompt: (s) => `Publish "${s.title}"?`, answer: z.object({ approved: z.boolean() }) }),
  )
  .node('publish', (s) => ({ published: s.approved }), { terminal: true })
  .edge('draft', 'review')
  .edge('review', 'publish')
  .entry('draft')
  .compile();

let dir: string;
let store: SqliteStore;
let served: Served;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'waymark-api-'));
  store = new SqliteStore({ path: join(dir, 'runs.db') });
  served = await serve({ store, graphs: [review], token: 'test-token', maxBodyBytes: 4096 });
});
afterAll(async () => {
  await served?.close();
  await store?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A request to the API with the token (or the headers given instead). */
function api(path: string, init: RequestInit & { json?: unknown } = {}): Promise<Response> {
  const { json, ...rest } = init;
  return fetch(`${served.url}${path}`, {
    ...rest,
    headers: {
      authorization: 'Bearer test-token',
      ...(json !== undefined && { 'content-type': 'application/json' }),
      ...(rest.headers as Record<string, string>),
    },
    ...(json !== undefined && { method: rest.method ?? 'POST', body: JSON.stringify(json) }),
  });
}

interface Sse {
  readonly id: string;
  readonly event: string;
  readonly data: { type: string; offset: string; status?: string; name?: string; cause?: string };
}

/** Reads a run's SSE stream until `stop` says so (or it ends); the messages, parsed. */
async function events(
  runId: string,
  stop: (m: Sse) => boolean,
  headers: Record<string, string> = {},
): Promise<Sse[]> {
  const res = await api(`/runs/${runId}/events`, { headers });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  const out: Sse[] = [];
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return out;
    buffer += value;
    let end = buffer.indexOf('\n\n');
    while (end !== -1) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const field = (name: string) =>
        block
          .split('\n')
          .find((l) => l.startsWith(`${name}:`))
          ?.slice(name.length + 1)
          .trim();
      const data = field('data');
      if (data !== undefined) {
        const message = { id: field('id')!, event: field('event')!, data: JSON.parse(data) };
        out.push(message);
        if (stop(message)) {
          await reader.cancel();
          return out;
        }
      }
      end = buffer.indexOf('\n\n');
    }
  }
}

/** A response's JSON, as the test reads it. */
// biome-ignore lint/suspicious/noExplicitAny: the tests read the API's JSON field by field.
const read = (res: Response): Promise<any> => res.json();

const isRun = (status: string) => (m: Sse) => m.data.type === 'run' && m.data.status === status;

describe('the HTTP API', () => {
  it('starts a run, streams it to its wait, takes the answer, and streams it on to its end', async () => {
    const started = await api('/runs', {
      json: { graph: 'api-review', input: { title: 'T' }, runId: 'r1' },
    });
    expect(started.status).toBe(202);
    expect(await read(started)).toMatchObject({ runId: 'r1' });
    const first = await events('r1', isRun('waiting'));
    expect(first[0]!.data).toMatchObject({ type: 'run', status: 'running' });
    expect(first.map((m) => m.event)).toContain('custom');
    expect(first.every((m) => m.id === m.data.offset && m.event === m.data.type)).toBe(true);

    const waits = await read(await api('/runs/r1/waits?open=true'));
    expect(waits.waits).toMatchObject([{ requestId: 'r1/review:1', node: 'review' }]);
    const answered = await api(`/runs/r1/waits/${encodeURIComponent('r1/review:1')}/answer`, {
      json: { answer: { approved: true }, by: 'ana' },
    });
    expect(answered.status).toBe(202);
    // Resumed after the last event seen: exactly what came after.
    const rest = await events('r1', isRun('succeeded'), { 'last-event-id': first.at(-1)!.id });
    const whole = await events('r1', isRun('succeeded'));
    expect([...first, ...rest]).toEqual(whole);

    const run = await read(await api('/runs/r1'));
    expect(run).toMatchObject({ status: 'succeeded', state: { approved: true, published: true } });
    const hist = await read(await api('/runs/r1/history?limit=2'));
    expect(hist.steps).toHaveLength(2);
    expect(hist.next).toBe(1);
    const step0 = await read(await api('/runs/r1/steps/0'));
    expect(step0).toMatchObject({ seq: 0, event: 'created', state: { title: 'T' } });
  });

  it('lists runs a page at a time, newest first, with a cursor', async () => {
    for (const id of ['p1', 'p2', 'p3'])
      expect(
        (await api('/runs', { json: { graph: 'api-review', input: { title: id }, runId: id } }))
          .status,
      ).toBe(202);
    const first = await read(await api('/runs?graph=api-review&status=waiting&limit=2'));
    expect(first.runs.map((r: { runId: string }) => r.runId)).toEqual(['p3', 'p2']);
    const second = await read(
      await api(`/runs?graph=api-review&status=waiting&limit=2&cursor=${first.next}`),
    );
    expect(second.runs.map((r: { runId: string }) => r.runId)).toEqual(['p1']);
    expect(second.next).toBeNull();
    const graphs = await read(await api('/graphs'));
    expect(graphs.graphs).toMatchObject([
      { name: 'api-review', mermaid: expect.stringMatching(/^flowchart/) },
    ]);
  });

  it('serves concurrent watchers of one run the same stream', async () => {
    await api('/runs', { json: { graph: 'api-review', input: { title: 'C' }, runId: 'c1' } });
    const streams = await Promise.all([1, 2, 3].map(() => events('c1', isRun('waiting'))));
    expect(streams[1]).toEqual(streams[0]);
    expect(streams[2]).toEqual(streams[0]);
  });

  it('refuses with a code and the right status, changing nothing', async () => {
    const code = async (res: Response, status: number) => {
      expect(res.status).toBe(status);
      return (await read(res)).error.code;
    };
    expect(await code(await fetch(`${served.url}/runs`), 401)).toBe('AUTH_REQUIRED');
    expect(
      await code(await api('/runs', { headers: { authorization: 'Bearer wrong' } }), 401),
    ).toBe('AUTH_REQUIRED');
    expect(
      await code(
        await api('/runs', {
          method: 'POST',
          body: '{not json',
          headers: { 'content-type': 'application/json' },
        }),
        400,
      ),
    ).toBe('USAGE_INVALID');
    expect(await code(await api('/runs', { json: { graph: 'nope' } }), 404)).toBe(
      'GRAPH_NOT_SERVED',
    );
    expect(
      await code(await api('/runs', { json: { graph: 'api-review', input: { title: 3 } } }), 400),
    ).toBe('INPUT_INVALID');
    expect(
      await code(
        await api('/runs', { json: { graph: 'api-review', input: { title: 'T' }, runId: 'r1' } }),
        409,
      ),
    ).toBe('RUN_EXISTS');
    expect(await code(await api('/runs/nope'), 404)).toBe('RUN_NOT_FOUND');
    expect(await code(await api('/runs/r1/events?after=soon'), 400)).toBe('OPTIONS_INVALID');
    expect(
      await code(
        await api('/runs/r1/patch', { json: { update: { title: 'U' }, by: 'a', reason: 'b' } }),
        409,
      ),
    ).toBe('RUN_NOT_PATCHABLE');
    expect(
      await code(
        await api('/runs/p1/waits/p1%2Freview%3A1/answer', {
          json: { answer: { approved: 'yes' } },
        }),
        400,
      ),
    ).toBe('ANSWER_INVALID');
    expect(
      await code(
        await api('/runs', {
          json: { graph: 'api-review', input: { title: 'x'.repeat(10_000) } },
        }),
        413,
      ),
    ).toBe('REQUEST_TOO_LARGE');
    expect(await code(await api('/nowhere'), 404)).toBe('USAGE_INVALID');
    // Nothing of the refused requests was recorded.
    const listed = await read(await api('/runs?limit=100'));
    expect(listed.runs.map((r: { runId: string }) => r.runId).sort()).toEqual([
      'c1',
      'p1',
      'p2',
      'p3',
      'r1',
    ]);
    expect((await read(await api('/runs/p1'))).status).toBe('waiting');
  });

  it('cancels, patches and continues a thread over HTTP', async () => {
    const patched = await api('/runs/p2/patch', {
      json: { update: { notes: ['from the api'] }, by: 'ana', reason: 'context' },
    });
    expect(patched.status).toBe(200);
    expect((await read(patched)).state.notes).toEqual(['drafted p2', 'from the api']);
    const cancelled = await api('/runs/p3/cancel', { json: { reason: 'not needed' } });
    expect(await read(cancelled)).toMatchObject({ status: 'cancelled' });
    const cont = await api('/runs/r1/continue', { json: { input: { title: 'T2' }, runId: 'r2' } });
    expect(cont.status).toBe(202);
    await events('r2', isRun('waiting'));
    const thread = await read(await api('/runs?thread=r1'));
    expect(thread.runs.map((r: { runId: string }) => r.runId)).toEqual(['r2']);
  });
  it('moves a waiting run to another node (resume with goto), refusing first, with nothing recorded, a node it cannot be at', async () => {
    await api('/runs', { json: { graph: 'api-review', input: { title: 'G' }, runId: 'g1' } });
    const first = await events('g1', isRun('waiting'));
    const before = await read(await api('/runs/g1'));
    // Checked before the 202: the move would have run in the background, out of the caller's sight.
    const refused = await api('/runs/g1/resume', { json: { goto: 'drat' } });
    expect(refused.status).toBe(400);
    expect((await read(refused)).error).toMatchObject({
      code: 'GOTO_INVALID',
      details: { option: 'goto', node: 'drat', suggestion: 'draft' },
    });
    expect(await read(await api('/runs/g1'))).toEqual(before);

    const moved = await api('/runs/g1/resume', { json: { goto: 'publish' } });
    expect(moved.status).toBe(202);
    const seen = await events('g1', isRun('succeeded'), { 'last-event-id': first.at(-1)!.id });
    expect(seen[0]!.data).toMatchObject({ type: 'run', status: 'running', cause: 'moved' });
    // The wait the move dropped is closed: it can no longer be answered.
    const late = await api(`/runs/g1/waits/${encodeURIComponent('g1/review:1')}/answer`, {
      json: { answer: { approved: true } },
    });
    expect((await read(late)).error.code).toBe('WAIT_CLOSED');
    expect((await read(await api('/runs/g1'))).state).toMatchObject({ published: false });
  });

  it('patches a waiting run as its person node (asNode): the wait is dropped and what follows waits for a resume', async () => {
    await api('/runs', { json: { graph: 'api-review', input: { title: 'A' }, runId: 'g2' } });
    await events('g2', isRun('waiting'));
    const by = { by: 'ana', reason: 'approved on the phone' };
    const refused = await api('/runs/g2/patch', {
      json: { update: { approved: true }, ...by, asNode: 'publsh' },
    });
    expect(refused.status).toBe(400);
    expect((await read(refused)).error.code).toBe('GOTO_INVALID');

    const patched = await api('/runs/g2/patch', {
      json: { update: { approved: true }, ...by, asNode: 'review' },
    });
    expect(patched.status).toBe(200);
    expect(await read(patched)).toMatchObject({ status: 'waiting', state: { approved: true } });
    expect((await read(await api('/runs/g2/waits?open=true'))).waits).toEqual([]);
    expect((await api('/runs/g2/resume', { json: {} })).status).toBe(202);
    await events('g2', isRun('succeeded'));
    expect((await read(await api('/runs/g2'))).state).toMatchObject({ published: true });
  });
  it('answers a stream at once even when its next event is days away: a waiting run, after its last event', async () => {
    await api('/runs', { json: { graph: 'api-review', input: { title: 'W' }, runId: 'w1' } });
    const seen = await events('w1', isRun('waiting'));
    const controller = new AbortController();
    const res = await api('/runs/w1/events?until=end', {
      headers: { 'last-event-id': seen.at(-1)!.id },
      signal: controller.signal,
    });
    // The headers came before any event: the client knows the stream is open.
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    controller.abort();
    await res.body?.cancel().catch(() => {});
  });
  it('ends the stream of a waiting run at its wait, as `curl -N` would see it; `until=end` holds on across the answer', async () => {
    await api('/runs', { json: { graph: 'api-review', input: { title: 'W' }, runId: 'w2' } });
    // Read to the end of the response, nothing to stop it: the server closes it at the wait.
    const stopped = await events('w2', () => false);
    expect(stopped.map((m) => m.event)).toContain('wait.opened');
    expect(stopped.filter((m) => m.event === 'run').at(-1)!.data.status).toBe('waiting');
    // Again from the wait: nothing new, and it ends at once.
    const again = await events('w2', () => false, { 'last-event-id': stopped.at(-1)!.id });
    expect(again).toEqual([]);

    const res = await api('/runs/w2/events?until=end');
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    let text = '';
    while (!text.includes('event: wait.opened')) text += (await reader.read()).value ?? '';
    // Still open past the wait: the answer moves the run on, and the stream with it.
    await api(`/runs/w2/waits/${encodeURIComponent('w2/review:1')}/answer`, {
      json: { answer: { approved: true } },
    });
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      text += value;
    }
    expect(text).toContain('event: wait.answered');
    expect(text.trimEnd().split('\n\n').at(-1)).toMatch(/"type":"run","status":"succeeded"/);

    const bad = await api('/runs/w2/events?until=later');
    expect(bad.status).toBe(400);
    expect((await read(bad)).error.code).toBe('USAGE_INVALID');
  });
});
