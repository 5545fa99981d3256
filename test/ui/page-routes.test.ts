import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { append, graph, person, run } from '../../src/index.js';
import { type Served, serve } from '../../src/server.js';
import { SqliteStore } from '../../src/sqlite.js';
import { pageDir } from './fixtures/page-build.js';

// What the server adds for the page, over real HTTP: its files without the token (and nothing
// outside their folder), a graph's declaration, rewind, a run's quarantine, and the listing of
// runs watched live with each running run's liveness.

const review = graph('page-review', {
  state: z.object({
    title: z.string(),
    notes: z.array(z.string()).default([]),
    approved: z.boolean().default(false),
  }),
  reducers: { notes: append },
})
  .node('draft', (s) => ({ notes: [`drafted ${s.title}`] }))
  .node('group/review', person({ prompt: 'ok?', answer: z.object({ approved: z.boolean() }) }))
  .node('publish', () => ({}), { terminal: true })
  .edge('draft', 'group/review')
  .edge('group/review', 'publish')
  .entry('draft')
  .compile();

let dir: string;
let store: SqliteStore;
let served: Served;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'waymark-page-routes-'));
  store = new SqliteStore({ path: join(dir, 'runs.db') });
  served = await serve({ store, graphs: [review], token: 't', ui: await pageDir() });
  await run(review, { title: 'T' }, { store, runId: 'r-1' });
}, 60_000);
afterAll(async () => {
  await served?.close();
  await store?.close();
  rmSync(dir, { recursive: true, force: true });
});

const api = (path: string, init: RequestInit = {}) =>
  fetch(`${served.url}${path}`, {
    ...init,
    headers: { authorization: 'Bearer t', 'content-type': 'application/json', ...init.headers },
  });

/** The status and body of a GET sent with its path as written: fetch would resolve the dots. */
function raw(path: string): Promise<[number, string]> {
  const { hostname, port } = new URL(served.url);
  return new Promise((resolve, reject) => {
    request({ host: hostname, port, path }, (res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => {
        body += chunk.toString();
      });
      res.on('end', () => resolve([res.statusCode ?? 0, body]));
    })
      .on('error', reject)
      .end();
  });
}

describe("the page's files", () => {
  it('are served under /ui/ without the token, with a policy that keeps the page on its origin', async () => {
    const res = await fetch(`${served.url}/ui/`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-security-policy')).toContain("default-src 'self'");
    expect(res.headers.get('cache-control')).toBe('no-cache');
    const html = await res.text();
    const script = /src="(\/ui\/assets\/[^"]+\.js)"/.exec(html)?.[1];
    const asset = await fetch(`${served.url}${script}`);
    expect(asset.status).toBe(200);
    expect(asset.headers.get('content-type')).toContain('text/javascript');
    expect(asset.headers.get('cache-control')).toContain('immutable');
  });

  it('send a browser at / to /ui/, and give nothing outside their folder', async () => {
    const root = await fetch(`${served.url}/`, { redirect: 'manual' });
    expect(root.status).toBe(302);
    expect(root.headers.get('location')).toBe('/ui/');
    // Dots the URL resolves leave /ui/ (then the token is asked for); encoded ones are no file.
    for (const path of ['/ui/../../package.json', '/ui/..%2f..%2fpackage.json', '/ui/%2e%2e/x']) {
      const [status, body] = await raw(path);
      expect([401, 404]).toContain(status);
      expect(body).not.toContain('"version"');
    }
    expect((await fetch(`${served.url}/ui/nope.js`)).status).toBe(404);
  });

  it('leave the API behind its token', async () => {
    expect((await fetch(`${served.url}/runs`)).status).toBe(401);
    expect((await fetch(`${served.url}/graphs/page-review`)).status).toBe(401);
  });
});

describe('the routes the page reads and drives', () => {
  it("GET /graphs/:name gives the graph's declaration as data, nodes with slashes and all", async () => {
    const res = await api('/graphs/page-review');
    expect(res.status).toBe(200);
    const { def } = (await res.json()) as { def: { nodes: { name: string }[]; entry: string } };
    expect(def.nodes.map((n) => n.name)).toEqual(['draft', 'group/review', 'publish']);
    expect(def.entry).toBe('draft');
    expect((await api('/graphs/other')).status).toBe(404);
  });

  it("GET /graphs/:name/cost gives each node's worst case, the worst path and the runs read", async () => {
    const res = await api('/graphs/page-review/cost');
    expect(res.status).toBe(200);
    const cost = (await res.json()) as Record<string, unknown>;
    expect(cost).toMatchObject({
      notes: { draft: '≤ 1×', 'group/review': '≤ 1×', publish: '≤ 1×' },
      worst: ['draft', 'group/review', 'publish'],
      total: '3 executions, 0 model calls, 0 tokens (0 in, 0 out), $0',
      unbounded: [],
    });
    expect(cost.runs).toBeGreaterThanOrEqual(1);
    expect((await api('/graphs/other/cost')).status).toBe(404);
  });

  it('POST /runs/:id/rewind starts a new run from before the node, with the note, and leaves the run as it was', async () => {
    const res = await api('/runs/r-1/rewind', {
      method: 'POST',
      body: JSON.stringify({ to: 'draft', note: 'shorter, please', runId: 'r-1b' }),
    });
    expect(res.status).toBe(202);
    expect(((await res.json()) as { runId: string }).runId).toBe('r-1b');
    await expect.poll(async () => (await store.getRun('r-1b'))?.status).toBe('waiting');
    const state = ((await (await api('/runs/r-1b')).json()) as { state: { notes: string[] } })
      .state;
    expect(state.notes).toContain('shorter, please');
    expect((await store.getRun('r-1'))?.status).toBe('waiting');
  });

  it('refuses a rewind to a node the run never reached, or a note with no field to go in', async () => {
    const never = await api('/runs/r-1/rewind', {
      method: 'POST',
      body: JSON.stringify({ to: 'publish' }),
    });
    expect(never.status).toBe(400);
    expect(((await never.json()) as { error: { code: string } }).error.code).toBe(
      'OPTIONS_INVALID',
    );
    const field = await api('/runs/r-1/rewind', {
      method: 'POST',
      body: JSON.stringify({ to: 'draft', note: 'x', noteField: 'nope' }),
    });
    expect(((await field.json()) as { error: { code: string } }).error.code).toBe(
      'OPTIONS_INVALID',
    );
    expect(
      (await api('/runs/nope/rewind', { method: 'POST', body: '{"to":"draft"}' })).status,
    ).toBe(404);
  });

  it("GET /runs/:id/quarantine lists what the run's checks set aside", async () => {
    const res = await api('/runs/r-1/quarantine');
    expect(await res.json()).toEqual({ quarantine: [] });
  });

  it('GET /watch/runs tells the runs at once, and again when one changes', async () => {
    const stop = new AbortController();
    const res = await api('/watch/runs', { signal: stop.signal });
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    const next = async () => {
      let text = '';
      while (!text.includes('\n\n')) text += (await reader.read()).value ?? '';
      const data = /data: (.*)/.exec(text)![1]!;
      return (JSON.parse(data) as { runs: { runId: string; status: string }[] }).runs;
    };
    const first = await next();
    expect(first.map((r) => r.runId).sort()).toEqual(['r-1', 'r-1b']);
    await store.getRun('r-1');
    await api('/runs/r-1/cancel', { method: 'POST', body: '{}' });
    const second = await next();
    expect(second.find((r) => r.runId === 'r-1')?.status).toBe('cancelled');
    stop.abort();
  });
});
