import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { graph, person } from '../../src/index.js';
import { routes } from '../../src/server/routes.js';
import * as schemas from '../../src/server/schemas.js';
import { createApp, type Served, serve } from '../../src/server.js';
import { SqliteStore } from '../../src/sqlite.js';

// The API's OpenAPI document is made from the schemas its routes validate with: it lists every
// route the server has and no other, what it says a route takes is what the route checks, and
// what the server sends matches what it says it sends.

const approval = graph('openapi-approval', {
  state: z.object({ title: z.string(), approved: z.boolean().default(false) }),
})
  .node('draft', () => ({}))
  .node('review', person({ prompt: 'Ship it?', answer: z.object({ approved: z.boolean() }) }))
  .node('ship', () => ({}), { terminal: true })
  .edge('draft', 'review')
  .edge('review', 'ship')
  .entry('draft')
  .compile();

let dir: string;
let store: SqliteStore;
let served: Served;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'waymark-openapi-'));
  store = new SqliteStore({ path: join(dir, 'runs.db') });
  served = await serve({ store, graphs: [approval], token: 'tok' });
});
afterAll(async () => {
  await served?.close();
  await store?.close();
  rmSync(dir, { recursive: true, force: true });
});

// biome-ignore lint/suspicious/noExplicitAny: JSON answers the tests walk by path
async function api(path: string, json?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(`${served.url}${path}`, {
    headers: { authorization: 'Bearer tok', 'content-type': 'application/json' },
    ...(json !== undefined && { method: 'POST', body: JSON.stringify(json) }),
  });
  return { status: res.status, body: await res.json() };
}

describe('the OpenAPI document', () => {
  it('is served without a token, as OpenAPI 3.1 with bearer security', async () => {
    const res = await fetch(`${served.url}/openapi.json`);
    expect(res.status).toBe(200);
    const doc = (await res.json()) as object;
    expect(doc).toMatchObject({
      openapi: '3.1.0',
      info: { title: 'waymark' },
      security: [{ bearer: [] }],
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
    });
  });

  it('lists exactly the routes the server has', async () => {
    const doc = await document();
    const documented = Object.entries(doc.paths as Record<string, object>)
      .flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`))
      .sort();
    const { hono } = createApp({ store, graphs: [approval], token: 't' });
    const registered = hono.routes
      .filter((r) => r.method !== 'ALL' && r.path !== '/openapi.json')
      .map((r) => `${r.method} ${r.path.replace(/:(\w+)/g, '{$1}')}`);
    expect([...new Set(registered)].sort()).toEqual(documented);
  });

  it("describes a route's body and query as the route checks them", async () => {
    const doc = await document();
    const start = doc.paths['/runs'].post;
    expect(start.requestBody.content['application/json'].schema).toMatchObject({
      type: 'object',
      required: ['graph'],
      additionalProperties: false,
      properties: { graph: { type: 'string' }, runId: { type: 'string' } },
    });
    expect(start.responses['202']).toBeDefined();
    const list = doc.paths['/runs'].get.parameters.map((p: { name: string }) => p.name);
    expect(list).toEqual(['status', 'graph', 'thread', 'since', 'until', 'limit', 'cursor']);
    const status = doc.paths['/runs'].get.parameters[0];
    expect(status.schema.enum).toContain('waiting');
    const events = doc.paths['/runs/{id}/events'].get;
    expect(events.parameters.map((p: { name: string; in: string }) => `${p.in}:${p.name}`)).toEqual(
      ['path:id', 'query:after', 'query:until', 'header:Last-Event-ID'],
    );
    const until = events.parameters.find((p: { name: string }) => p.name === 'until');
    expect(until.schema.enum).toEqual(['stop', 'end']);
    expect(Object.keys(events.responses['200'].content)).toEqual(['text/event-stream']);
  });

  it('documents the moves a resume and a patch take: goto and asNode, refused GOTO_INVALID', async () => {
    const doc = await document();
    const resume = doc.paths['/runs/{id}/resume'].post;
    expect(resume.requestBody.content['application/json'].schema).toMatchObject({
      additionalProperties: false,
      properties: { goto: { type: 'string' } },
    });
    const patch = doc.paths['/runs/{id}/patch'].post;
    expect(patch.requestBody.content['application/json'].schema).toMatchObject({
      required: ['update', 'by', 'reason'],
      properties: { asNode: { type: 'string' } },
    });
    for (const route of [resume, patch])
      expect(JSON.stringify(route.responses)).toContain('GOTO_INVALID');
  });
});

describe('requests checked against the documented schemas', () => {
  it('refuses a field the body does not take, by name, and records nothing', async () => {
    const refused = await api('/runs', { graph: 'openapi-approval', input: {}, runid: 'typo' });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({ code: 'USAGE_INVALID' });
    expect(refused.body.error.message).toContain('runid');
    expect(await store.listRuns()).toEqual([]);
  });

  it('refuses a query value out of its shape: a status that is none, a limit not a number', async () => {
    const status = await api('/runs?status=done');
    expect(status).toMatchObject({ status: 400, body: { error: { code: 'USAGE_INVALID' } } });
    expect(status.body.error.message).toContain('status');
    const limit = await api('/runs?limit=lots');
    expect(limit.body.error.message).toContain('limit: must be a whole number');
    expect((await api('/runs?limit=0')).status).toBe(400);
    expect((await api('/runs?colour=red')).body.error.message).toContain('colour');
  });
});

describe('responses match the documented schemas', () => {
  it('for every route a run goes through, from start to its answered wait', async () => {
    const started = await api('/runs', {
      graph: 'openapi-approval',
      input: { title: 'T' },
      runId: 'a',
    });
    expect(started.status).toBe(routes.startRun.status);
    schemas.moved.parse(started.body);
    schemas.graphList.parse((await api('/graphs')).body);
    schemas.runPage.parse((await api('/runs')).body);
    await until(async () => (await api('/runs/a')).body.status === 'waiting');
    schemas.runView.parse((await api('/runs/a')).body);
    schemas.traceResponse.parse((await api('/runs/a/trace')).body);
    schemas.historyPage.parse((await api('/runs/a/history')).body);
    schemas.stepResponse.parse((await api('/runs/a/steps/1')).body);
    schemas.plan.parse((await api('/runs/a/plan')).body);
    const waits = schemas.waitList.parse((await api('/runs/a/waits?open=true')).body);
    const answered = await api(
      `/runs/a/waits/${encodeURIComponent(waits.waits[0]!.requestId)}/answer`,
      {
        answer: { approved: true },
      },
    );
    schemas.moved.parse(answered.body);
    await until(async () => (await api('/runs/a')).body.status === 'succeeded');
    await api('/runs', { graph: 'openapi-approval', input: { title: 'U' }, runId: 'b' });
    await until(async () => (await api('/runs/b')).body.status === 'waiting');
    const patched = await api('/runs/b/patch', {
      update: { title: 'V' },
      by: 'ana',
      reason: 'typo',
    });
    expect(patched.status).toBe(200);
    schemas.patched.parse(patched.body);
    const cancelled = await api('/runs/b/cancel', {});
    expect(cancelled.status).toBe(200);
    schemas.stopped.parse(cancelled.body);
  });
});

describe('pages of runs', () => {
  it('neither skip nor repeat a run when runs are created between two pages', async () => {
    for (const id of ['p1', 'p2', 'p3', 'p4']) {
      await api('/runs', { graph: 'openapi-approval', input: { title: id }, runId: id });
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    const first = await api('/runs?limit=3');
    const seen: string[] = first.body.runs.map((r: { runId: string }) => r.runId);
    await api('/runs', { graph: 'openapi-approval', input: { title: 'new' }, runId: 'p5' });
    let cursor = first.body.next;
    while (cursor !== null) {
      const page = await api(`/runs?limit=3&cursor=${cursor}`);
      seen.push(...page.body.runs.map((r: { runId: string }) => r.runId));
      cursor = page.body.next;
    }
    const before = (await store.listRuns()).map((r) => r.id).filter((id) => id !== 'p5');
    expect(seen).toEqual(before);
    expect(await api('/runs?cursor=bm9wZQ')).toMatchObject({
      status: 400,
      body: { error: { code: 'USAGE_INVALID' } },
    });
  });

  it('filter by creation time, given in ms since the epoch or in ISO 8601', async () => {
    const runs = await store.listRuns();
    const p3 = runs.find((r) => r.id === 'p3')!;
    const iso = new Date(p3.createdAt).toISOString();
    for (const at of [String(p3.createdAt), iso]) {
      const since = await api(`/runs?since=${at}&graph=openapi-approval`);
      expect(
        since.body.runs.every(
          (r: { createdAt: string }) => Date.parse(r.createdAt) >= p3.createdAt,
        ),
      ).toBe(true);
      expect(since.body.runs.map((r: { runId: string }) => r.runId)).toContain('p3');
      const until = await api(`/runs?until=${at}`);
      expect(until.body.runs.map((r: { runId: string }) => r.runId)).not.toContain('p3');
    }
    const bad = await api('/runs?since=yesterday');
    expect(bad).toMatchObject({ status: 400, body: { error: { code: 'USAGE_INVALID' } } });
  });
});

// biome-ignore lint/suspicious/noExplicitAny: a JSON document the test walks by path
async function document(): Promise<any> {
  return (await fetch(`${served.url}/openapi.json`)).json();
}

async function until(check: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error('timed out');
}

describe('CORS', () => {
  it('sends no CORS header unless origins are configured, and then only to those', async () => {
    const preflight = (url: string, origin: string) =>
      fetch(`${url}/runs`, {
        method: 'OPTIONS',
        headers: {
          origin,
          'access-control-request-method': 'GET',
          'access-control-request-headers': 'authorization',
        },
      });
    const none = await preflight(served.url, 'http://localhost:5173');
    expect(none.headers.get('access-control-allow-origin')).toBeNull();
    const open = await serve({
      store,
      graphs: [approval],
      token: 'tok',
      corsOrigins: ['http://localhost:5173'],
    });
    try {
      const allowed = await preflight(open.url, 'http://localhost:5173');
      expect(allowed.headers.get('access-control-allow-origin')).toBe('http://localhost:5173');
      expect(allowed.headers.get('access-control-allow-headers')).toContain('authorization');
      const other = await preflight(open.url, 'http://evil.example');
      expect(other.headers.get('access-control-allow-origin')).toBeNull();
      // The token is still required for the request itself.
      const res = await fetch(`${open.url}/runs`, { headers: { origin: 'http://localhost:5173' } });
      expect(res.status).toBe(401);
    } finally {
      await open.close();
    }
  });
});

describe('the memory routes', () => {
  // biome-ignore lint/suspicious/noExplicitAny: JSON answers the tests walk by path
  async function call(method: string, path: string, json?: unknown): Promise<any> {
    const res = await fetch(`${served.url}${path}`, {
      method,
      headers: { authorization: 'Bearer tok', 'content-type': 'application/json' },
      ...(json !== undefined && { body: JSON.stringify(json) }),
    });
    return { status: res.status, body: await res.json() };
  }

  it('are documented with the methods and bodies they check', async () => {
    const doc = await document();
    const item = doc.paths['/memory/{namespace}/{key}'];
    expect(Object.keys(item).sort()).toEqual(['delete', 'get', 'put']);
    expect(item.put.requestBody.content['application/json'].schema).toMatchObject({
      type: 'object',
      additionalProperties: false,
      properties: { ttlMs: { type: 'number' } },
    });
    const search = doc.paths['/memory/search'].post.requestBody.content['application/json'];
    expect(Object.keys(search.schema.properties)).toEqual(['prefix', 'filter', 'limit', 'offset']);
  });

  it('answer as documented, times in ISO 8601, an item there is none of as null', async () => {
    const put = await call('PUT', '/memory/users.u1/prefs', {
      value: { theme: 'dark' },
      ttlMs: 1_000,
    });
    expect(put.status).toBe(200);
    expect(schemas.memoryItem.parse(put.body)).toMatchObject({ namespace: ['users', 'u1'] });
    expect(Date.parse(put.body.expiresAt) - Date.parse(put.body.updatedAt)).toBe(1_000);
    const got = await call('GET', '/memory/users.u1/prefs');
    expect(schemas.memoryItemResponse.parse(got.body).item).toMatchObject({
      value: { theme: 'dark' },
    });
    const found = await call('POST', '/memory/search', {
      prefix: ['users'],
      filter: { theme: 'dark' },
    });
    expect(schemas.memorySearchResponse.parse(found.body).items).toHaveLength(1);
    const deleted = await call('DELETE', '/memory/users.u1/prefs');
    expect(schemas.memoryDeleted.parse(deleted.body)).toEqual({ deleted: true });
    expect((await call('GET', '/memory/users.u1/prefs')).body).toEqual({ item: null });
  });

  it('refuse what the store cannot keep with MEMORY_INVALID, and a body out of shape (no value, a filter on a list) with USAGE_INVALID', async () => {
    const empty = await call('PUT', '/memory/users./k', { value: 1 });
    expect(empty).toMatchObject({ status: 400, body: { error: { code: 'MEMORY_INVALID' } } });
    const noValue = await call('PUT', '/memory/users/k', {});
    expect(noValue).toMatchObject({ status: 400, body: { error: { code: 'USAGE_INVALID' } } });
    const limit = await call('POST', '/memory/search', { limit: 'lots' });
    expect(limit).toMatchObject({ status: 400, body: { error: { code: 'USAGE_INVALID' } } });
    const filter = await call('POST', '/memory/search', { filter: { tags: ['a'] } });
    expect(filter).toMatchObject({ status: 400, body: { error: { code: 'USAGE_INVALID' } } });
  });
});
