import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { WaymarkClient } from '../../src/client.js';
import { graph, loadTrace, person, type StreamEvent, watch } from '../../src/index.js';
import { type Served, serve } from '../../src/server.js';
import { SqliteStore } from '../../src/sqlite.js';

// Points in time, one convention on every JSON surface: ISO 8601 in UTC to the millisecond, as
// `waymark --json` writes them; `waymark/client` gives them back as the library's numbers.

let failures = 1;
const timed = graph('times', {
  state: z.object({ sent: z.string().default(''), approved: z.boolean().default(false) }),
})
  .node(
    'fetch',
    (_s, ctx) => {
      ctx.emit('fetched', { n: 1 });
      if (failures-- > 0) throw new Error('connection reset');
      return {};
    },
    { retry: { attempts: 2, backoffMs: 20 } },
  )
  .node('ask', person({ prompt: 'Send?', answer: z.object({ approved: z.boolean() }) }))
  .node('send', async (_s, ctx) => ({ sent: await ctx.effect('mail', (key) => `sent ${key}`) }), {
    kind: 'effect',
    terminal: true,
  })
  .edge('fetch', 'ask')
  .edge('ask', 'send')
  .entry('fetch')
  .compile();

const isoAt = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const iso = (ms: number) => new Date(ms).toISOString();

let dir: string;
let store: SqliteStore;
let served: Served;
let client: WaymarkClient;
// biome-ignore lint/suspicious/noExplicitAny: the test reads the API's JSON field by field
const get = async (path: string): Promise<any> =>
  (await fetch(`${served.url}${path}`, { headers: { authorization: 'Bearer t' } })).json();

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'waymark-times-'));
  store = new SqliteStore({ path: join(dir, 'runs.db') });
  served = await serve({ store, graphs: [timed], token: 't' });
  client = new WaymarkClient({ url: served.url, token: 't' });
  await client.start('times', {}, { runId: 'x' });
  for await (const _ of client.events('x'));
  await client.answer('x', 'x/ask:1', { approved: true });
  for await (const _ of client.events('x', { until: 'end' }));
});
afterAll(async () => {
  await served?.close();
  await store?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('points in time', () => {
  it('the API writes every one as ISO 8601 in UTC, the instant the store holds', async () => {
    const record = (await store.getRun('x'))!;
    const [listed] = (await get('/runs')).runs;
    expect(listed).toMatchObject({
      createdAt: iso(record.createdAt),
      updatedAt: iso(record.updatedAt),
    });
    expect((await get('/runs/x')).run.updatedAt).toBe(iso(record.updatedAt));

    const trace = await loadTrace(store, 'x');
    const entries = (await get('/runs/x/trace')).entries;
    expect(entries.map((e: { startedAt: string }) => e.startedAt)).toEqual(
      trace.entries.map((e) => iso(e.startedAt)),
    );
    expect(entries.every((e: { durationMs: unknown }) => typeof e.durationMs === 'number')).toBe(
      true,
    );

    const steps = (await get('/runs/x/history')).steps;
    expect(steps.every((s: { at: string }) => isoAt.test(s.at))).toBe(true);
    expect((await get('/runs/x/steps/0')).at).toBe(steps[0].at);

    const [wait] = (await get('/runs/x/waits')).waits;
    const [stored] = await store.listWaits('x');
    expect(wait).toMatchObject({
      openedAt: iso(stored!.openedAt),
      answeredAt: iso(stored!.answeredAt!),
    });
    const [effect] = (await get('/runs/x/effects')).effects;
    expect(effect.at).toBe(iso((await store.listEffects('x'))[0]!.at));
  });

  it('a stream event carries `at`, `notBefore` and `emittedAt` as ISO, over SSE and in one answer', async () => {
    const library: StreamEvent[] = [];
    for await (const e of watch(store, timed, 'x', { follow: false })) library.push(e);
    const { events } = await get('/runs/x/recorded');
    expect(events).toHaveLength(library.length);
    expect(events.map((e: { at: string }) => e.at)).toEqual(library.map((e) => iso(e.at)));
    const retry = library.find((e) => e.type === 'activation.scheduled' && e.attempt === 2);
    const custom = library.find((e) => e.type === 'custom');
    expect(retry?.type === 'activation.scheduled' && retry.notBefore).toBeTypeOf('number');
    expect(events.find((e: { offset: string }) => e.offset === retry!.offset).notBefore).toBe(
      iso((retry as { notBefore: number }).notBefore),
    );
    expect(events.find((e: { offset: string }) => e.offset === custom!.offset).emittedAt).toBe(
      iso((custom as { emittedAt: number }).emittedAt),
    );

    const sse = await (
      await fetch(`${served.url}/runs/x/events`, { headers: { authorization: 'Bearer t' } })
    ).text();
    const sent = [...sse.matchAll(/^data: (.*)$/gm)].map((m) => JSON.parse(m[1]!));
    expect(sent).toEqual(events);
  });

  it('waymark/client gives them back as the library does: ms since the epoch', async () => {
    const library: StreamEvent[] = [];
    for await (const e of watch(store, timed, 'x', { follow: false })) library.push(e);
    const told: StreamEvent[] = [];
    for await (const e of client.events('x')) told.push(e);
    expect(told).toEqual(library);

    const record = (await store.getRun('x'))!;
    const { runs } = await client.listRuns();
    expect(runs[0]).toMatchObject({ createdAt: record.createdAt, updatedAt: record.updatedAt });
    expect((await client.getRun('x')).run.createdAt).toBe(record.createdAt);
    const [wait] = (await client.waits('x')).waits;
    expect(wait!.openedAt).toBe((await store.listWaits('x'))[0]!.openedAt);
  });
});
