import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { append, errorCodes, graph, MemoryStore, person, run } from '../../src/index.js';
import { createApp } from '../../src/server.js';
import { fuzzParameters, fuzzTimeout } from './settings.js';

// Random requests to `waymark serve`'s API, in process (Hono's app.request, no socket): bad JSON,
// JSON nested thousands deep, bodies past the limit, values of the wrong type, unknown routes and
// methods, odd ids and query strings, with and without the token. Every answer is a success or a
// coded 4xx `{ error: { code } }`, never a 500, and after each one the server still serves.

const review = graph('fuzz-review', {
  state: z.object({
    title: z.string(),
    notes: z.array(z.string()).default([]),
    approved: z.boolean().default(false),
  }),
  reducers: { notes: append },
})
  .node('draft', (s) => ({ notes: [`drafted ${s.title}`] }))
  .node('review', person({ prompt: 'Publish?', answer: z.object({ approved: z.boolean() }) }))
  .node('publish', () => ({}), { terminal: true })
  .edge('draft', 'review')
  .edge('review', 'publish')
  .entry('draft')
  .compile();

const token = 'fuzz-token';
const maxBodyBytes = 4096;
const store = new MemoryStore();
const app = createApp({ store, graphs: [review], token, maxBodyBytes });

beforeAll(async () => {
  await run(review, { title: 'known' }, { store, runId: 'known' });
});
afterAll(async () => {
  await app.stopStreams();
  await app.drain();
});

const segment = fc.oneof(
  fc.constantFrom('known', 'missing', 'fuzz-review', 'known%2Fdraft%3A1', '..', '%', '%00', ''),
  fc.string({ maxLength: 12 }).map(encodeURIComponent),
  fc.constant('x'.repeat(3_000)),
);
const path = fc.oneof(
  fc
    .tuple(
      fc.constantFrom(
        '/graphs',
        '/graphs/:a',
        '/runs',
        '/runs/:a',
        '/runs/:a/trace',
        '/runs/:a/history',
        '/runs/:a/steps/:b',
        '/runs/:a/waits',
        '/runs/:a/waits/:b/answer',
        '/runs/:a/resume',
        '/runs/:a/cancel',
        '/runs/:a/continue',
        '/runs/:a/patch',
        '/runs/:a/recorded',
        '/runs/:a/quarantine',
        '/runs/:a/effects',
        '/runs/:a/rewind',
        '/openapi.json',
        '/nowhere',
        '/runs/:a/:b/:a',
      ),
      segment,
      segment,
    )
    .map(([p, a, b]) => p.replace(/:a/g, a).replace(':b', b)),
);
const query = fc
  .array(
    fc.tuple(
      fc.constantFrom(
        'limit',
        'after',
        'status',
        'graph',
        'before',
        'seq',
        'states',
        'follow',
        'x',
      ),
      fc.oneof(
        fc.constantFrom('-1', '0', '1e9', 'abc', '', 'running', '99999999999999999999'),
        fc.string({ maxLength: 8 }),
      ),
    ),
    { maxLength: 3 },
  )
  .map((pairs) => (pairs.length === 0 ? '' : `?${new URLSearchParams(pairs).toString()}`));
const deep = (depth: number, open: string, close: string) =>
  open.repeat(depth) + close.repeat(depth);
const body = fc.oneof(
  fc.constant(undefined),
  fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v)),
  fc
    .record(
      {
        graph: fc.constantFrom('fuzz-review', 'other', 1),
        input: fc.oneof(fc.constant({ title: 'x' }), fc.jsonValue({ maxDepth: 2 })),
        runId: fc.oneof(fc.string({ maxLength: 8 }), fc.constant(5)),
        answer: fc.oneof(fc.constant({ approved: true }), fc.jsonValue({ maxDepth: 2 })),
        by: fc.oneof(fc.string({ maxLength: 5 }), fc.constant(null)),
        update: fc.jsonValue({ maxDepth: 2 }),
        reason: fc.string({ maxLength: 5 }),
      },
      { requiredKeys: [] },
    )
    .map((v) => JSON.stringify(v)),
  fc.constantFrom(
    '{',
    '{"a":',
    'null',
    '[]',
    '"text"',
    '\u0000',
    '{"graph":"fuzz-review","input":{"title":',
  ),
  fc.constantFrom(
    deep(5_000, '[', ']'),
    deep(5_000, '{"a":', '}'),
    `{"input":${deep(3_000, '[', ']')}}`,
  ),
  fc.constant(`{"input":{"title":"${'x'.repeat(maxBodyBytes)}"}}`),
);
const request = fc.record({
  method: fc.constantFrom(
    'GET',
    'GET',
    'POST',
    'POST',
    'PUT',
    'DELETE',
    'PATCH',
    'OPTIONS',
    'HEAD',
  ),
  path,
  query,
  body,
  auth: fc.constantFrom(
    `Bearer ${token}`,
    `Bearer ${token}`,
    `Bearer ${token}`,
    'Bearer wrong',
    '',
    `bearer ${token}`,
  ),
  contentType: fc.constantFrom(
    'application/json',
    'text/plain',
    'application/x-www-form-urlencoded',
    '',
  ),
});

const codes = new Set<string>(errorCodes);

describe('fuzzed HTTP requests to waymark serve', () => {
  it(
    'answer with a success or a coded 4xx, never a 500, and the server keeps serving',
    async () => {
      await fc.assert(
        fc.asyncProperty(request, async (r) => {
          const headers: Record<string, string> = {};
          if (r.auth !== '') headers.authorization = r.auth;
          if (r.contentType !== '') headers['content-type'] = r.contentType;
          const withBody = r.body !== undefined && r.method !== 'GET' && r.method !== 'HEAD';
          const response = await app.hono.request(`${r.path}${r.query}`, {
            method: r.method,
            headers,
            ...(withBody && { body: r.body as string }),
          });
          const what = `${r.method} ${r.path.slice(0, 80)}${r.query} ${String(r.body).slice(0, 80)}`;
          if (response.headers.get('content-type')?.includes('text/event-stream')) {
            await response.body?.cancel();
          } else if (response.status >= 400) {
            const text = await response.text();
            expect(response.status, `${what}: ${text}`).toBeLessThan(500);
            if (r.method !== 'HEAD') {
              const parsed = JSON.parse(text) as { error?: { code?: string } };
              expect(codes.has(parsed.error?.code ?? ''), `${what}: ${text}`).toBe(true);
            }
          } else {
            await response.arrayBuffer();
          }
          const still = await app.hono.request('/runs/known', {
            headers: { authorization: `Bearer ${token}` },
          });
          expect(still.status).toBe(200);
          await still.arrayBuffer();
        }),
        fuzzParameters(300),
      );
    },
    fuzzTimeout(60_000),
  );
});
