import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { WaymarkClient } from '../../src/client.js';
import {
  graph,
  isWaymarkError,
  memoryOf,
  permanentError,
  person,
  type StreamEvent,
} from '../../src/index.js';
import { type Served, serve } from '../../src/server.js';
import { SqliteStore } from '../../src/sqlite.js';

// waymark/client against a real server: every call, the stream as an async iterator, and a
// stream that breaks mid-run picked up after the last event it saw.

const approval = graph('client-approval', {
  state: z.object({ title: z.string(), approved: z.boolean().default(false) }),
})
  .node(
    'ask',
    person({ prompt: (s) => `Ship ${s.title}?`, answer: z.object({ approved: z.boolean() }) }),
  )
  .node('ship', () => ({}), { terminal: true })
  .edge('ask', 'ship')
  .entry('ask')
  .compile();

/** A model-kind node that spends, then fails: what a resume would re-pay. */
const billed = graph('client-billed', { state: z.object({ done: z.boolean().default(false) }) })
  .node(
    'call',
    (_s, ctx) => {
      ctx.usage({ inputTokens: 300, outputTokens: 100, costUsd: 0.0001 });
      throw permanentError('the provider said no');
    },
    { kind: 'model', terminal: true },
  )
  .entry('call')
  .compile();

/** An answer with a default and a refinement, which its JSON Schema cannot say. */
const noted = graph('client-noted', {
  state: z.object({ approved: z.boolean().default(false), note: z.string().default('') }),
})
  .node(
    'ask',
    person({
      prompt: 'Ship it?',
      answer: z.object({
        approved: z.boolean(),
        note: z
          .string()
          .refine((n) => n.length >= 3, 'say a little more')
          .default('none given'),
      }),
    }),
    { terminal: true },
  )
  .entry('ask')
  .compile();

let dir: string;
let store: SqliteStore;
let served: Served;
let api: WaymarkClient;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'waymark-client-'));
  store = new SqliteStore({ path: join(dir, 'runs.db') });
  served = await serve({ store, graphs: [approval, noted, billed], token: 't' });
  api = new WaymarkClient({ url: served.url, token: 't', reconnectMs: 10 });
});
afterAll(async () => {
  await served?.close();
  await store?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function collect(it: AsyncIterable<StreamEvent>, until?: (e: StreamEvent) => boolean) {
  const out: StreamEvent[] = [];
  for await (const e of it) {
    out.push(e);
    if (until?.(e)) break;
  }
  return out;
}

describe('waymark/client', () => {
  it('starts a run, answers its wait and follows its stream across it to its end', async () => {
    expect(await api.start('client-approval', { title: 'v1' }, { runId: 'r1' })).toMatchObject({
      runId: 'r1',
    });
    const following = collect(api.events('r1', { until: 'end' }));
    const { waits } = await api.waits('r1', { open: true });
    expect(waits.map((w) => w.requestId)).toEqual(['r1/ask:1']);
    await api.answer('r1', 'r1/ask:1', { approved: true }, 'ana');
    const events = await following;
    expect(events.at(-1)).toMatchObject({ type: 'run', status: 'succeeded' });
    expect((await api.getRun('r1')).state).toMatchObject({ approved: true });
    expect((await api.listRuns({ graph: 'client-approval' })).runs.map((r) => r.runId)).toEqual([
      'r1',
    ]);
  });

  it('reading a run that waits stops at its wait; answered, reading on after the last offset reaches its end', async () => {
    await api.start('client-approval', { title: 'v3' }, { runId: 'r3' });
    // Nothing is there to break the loop: the iteration itself ends where the run stops.
    const first = await collect(api.events('r3'));
    expect(first.filter((e) => e.type === 'run').at(-1)).toMatchObject({ status: 'waiting' });
    expect(first.at(-1)).toMatchObject({ type: 'wait.opened', requestId: 'r3/ask:1' });
    const last = first.at(-1)!.offset;
    // Read again at the wait, it ends there again, at once, with nothing new.
    expect(await collect(api.events('r3', { after: last }))).toEqual([]);

    await api.answer('r3', 'r3/ask:1', { approved: true }, 'ana');
    const rest = await collect(api.events('r3', { after: last }));
    expect(rest[0]).toMatchObject({ type: 'wait.answered' });
    expect(rest.at(-1)).toMatchObject({ type: 'run', status: 'succeeded' });
    // The two reads are the whole stream, each event once.
    expect([...first, ...rest]).toEqual(await collect(api.events('r3', { until: 'end' })));
  });

  it('a stream that breaks is opened again after the last event it saw: every event once', async () => {
    await api.start('client-approval', { title: 'v2' }, { runId: 'r2' });
    // A fetch that breaks the first stream after its first chunk, the way a dropped connection does.
    let broken = false;
    let streams = 0;
    const flaky: typeof fetch = async (input, init) => {
      const res = await fetch(input, init);
      const stream = String(input).includes('/events');
      if (stream) streams++;
      if (broken || !stream) return res;
      broken = true;
      let sent = 0;
      const body = res.body!.pipeThrough(
        new TransformStream<Uint8Array, Uint8Array>({
          transform(chunk, controller) {
            if (++sent > 1) controller.error(new Error('connection reset'));
            else controller.enqueue(chunk);
          },
        }),
      );
      return new Response(body, { status: res.status, headers: res.headers });
    };
    const client = new WaymarkClient({
      url: served.url,
      token: 't',
      fetch: flaky,
      reconnectMs: 10,
    });
    const following = collect(client.events('r2', { until: 'end' }));
    await new Promise((resolve) => setTimeout(resolve, 50));
    await api.answer('r2', 'r2/ask:1', { approved: false });
    const events = await following;
    expect(broken).toBe(true);
    expect(streams).toBe(2);
    const whole = await collect(api.events('r2', { until: 'end' }));
    expect(events).toEqual(whole);
  });

  it('plans a resume or a rewind before anything runs: what it re-pays, by recorded usage', async () => {
    await api.start('client-billed', {}, { runId: 'bill' });
    for (let i = 0; i < 200 && (await store.getRun('bill'))?.status !== 'failed'; i++)
      await new Promise((resolve) => setTimeout(resolve, 10));
    const before = (await store.getRun('bill'))?.seq;
    const plan = await api.plan('bill');
    expect(plan).toMatchObject({
      kind: 'resume',
      readBack: [],
      runAgain: [{ node: 'call', activation: 'call:1' }],
      rePays: { inputTokens: 300, outputTokens: 100, costUsd: 0.0001 },
    });
    expect(await api.plan('bill', { to: 'call' })).toMatchObject({ kind: 'rewind' });
    // Nothing was recorded: the run is as it stopped.
    expect((await store.getRun('bill'))?.seq).toBe(before);
    const refused = await api.plan('bill', { to: 'nowhere' }).catch((e: unknown) => e);
    expect(isWaymarkError(refused) && refused.code).toBe('OPTIONS_INVALID');
  });

  it('moves a run with resume({ goto }) and completes a node for it with patch(..., { asNode })', async () => {
    await api.start('client-approval', { title: 'm1' }, { runId: 'm1' });
    await collect(api.events('m1'));
    const refused = await api.resume('m1', { goto: 'sip' }).catch((e: unknown) => e);
    expect(isWaymarkError(refused) && refused.code).toBe('GOTO_INVALID');
    expect(await api.resume('m1', { goto: 'ship' })).toMatchObject({ runId: 'm1' });
    const moved = await collect(api.events('m1', { until: 'end' }));
    expect(moved).toContainEqual(expect.objectContaining({ type: 'run', cause: 'moved' }));
    expect((await api.getRun('m1')).status).toBe('succeeded');

    await api.start('client-approval', { title: 'm2' }, { runId: 'm2' });
    await collect(api.events('m2'));
    await api.patch('m2', { approved: true }, 'ana', 'said yes in the hall', { asNode: 'ask' });
    expect((await api.waits('m2', { open: true })).waits).toEqual([]);
    await api.resume('m2');
    await collect(api.events('m2', { until: 'end' }));
    expect((await api.getRun('m2')).state).toEqual({ title: 'm2', approved: true });
  });

  it('refusals reject with the code the server answered with', async () => {
    const code = (p: Promise<unknown>) =>
      p.then(
        () => 'resolved',
        (e: unknown) => (isWaymarkError(e) ? e.code : String(e)),
      );
    expect(await code(api.getRun('nope'))).toBe('RUN_NOT_FOUND');
    expect(await code(new WaymarkClient({ url: served.url, token: 'wrong' }).listRuns())).toBe(
      'AUTH_REQUIRED',
    );
    expect(await code(collect(api.events('r1', { after: 'soon' })))).toBe('OPTIONS_INVALID');
    expect(await code(api.cancel('r1'))).toBe('RUN_NOT_CANCELLABLE');
  });

  it("an answer is checked against the node's own schema, as `waymark answer` checks it: its refinements hold, its defaults fill what it leaves out", async () => {
    await api.start('client-noted', {}, { runId: 'n1' });
    const refused = await api.answer('n1', 'n1/ask:1', { approved: true, note: 'ok' }).then(
      () => undefined,
      (e: unknown) => e as Error & { code: string },
    );
    expect(refused?.code).toBe('ANSWER_INVALID');
    expect(refused?.message).toContain('say a little more');
    await api.answer('n1', 'n1/ask:1', { approved: true });
    await collect(api.events('n1', { until: 'end' }));
    expect((await api.getRun('n1')).state).toEqual({ approved: true, note: 'none given' });
  });

  it('a refusal names its code once in its message, as the server said it', async () => {
    const second = await api.answer('r1', 'r1/ask:1', { approved: true }).then(
      () => undefined,
      (e: unknown) => e as Error & { code: string },
    );
    expect(second?.code).toBe('WAIT_ALREADY_ANSWERED');
    expect(second?.message).toMatch(/^WAIT_ALREADY_ANSWERED: wait "r1\/ask:1" was answered by/);
    expect(second?.message.split('WAIT_ALREADY_ANSWERED')).toHaveLength(2);
  });
});

describe('waymark/client memory', () => {
  it('puts, gets, searches and deletes the memory the server keeps, which a program reads too', async () => {
    const ns = ['users', 'u/1 %ü'];
    const put = await api.memory.put(ns, 'prefs/ui', { theme: 'dark' }, { ttlMs: 60_000 });
    expect(put).toMatchObject({ namespace: ns, key: 'prefs/ui', value: { theme: 'dark' } });
    expect(put.expiresAt).toBe(put.updatedAt + 60_000);
    await api.memory.put(['users', 'u2'], 'prefs/ui', { theme: 'light' });
    expect(await memoryOf(store).get(ns, 'prefs/ui')).toMatchObject({ value: { theme: 'dark' } });
    expect(await api.memory.get(ns, 'prefs/ui')).toEqual(put);
    const dark = await api.memory.search(['users'], { filter: { theme: 'dark' } });
    expect(dark.map((item) => item.namespace)).toEqual([ns]);
    expect((await api.memory.search(['users'], { limit: 1, offset: 1 })).map((i) => i.key)).toEqual(
      ['prefs/ui'],
    );
    expect(await api.memory.listNamespaces({ prefix: ['users'] })).toEqual([ns, ['users', 'u2']]);
    expect(await api.memory.listNamespaces({ suffix: ['u2'], maxDepth: 1 })).toEqual([['users']]);
    expect(await api.memory.delete(ns, 'prefs/ui')).toBe(true);
    expect(await api.memory.get(ns, 'prefs/ui')).toBeUndefined();
    expect(await api.memory.delete(ns, 'prefs/ui')).toBe(false);
  });

  it('refuses a namespace part with a period with MEMORY_INVALID (400), writing nothing', async () => {
    const refused = await api.memory.put(['a.b'], 'k', 1).catch((e: unknown) => e);
    expect(refused).toMatchObject({ code: 'MEMORY_INVALID' });
    const empty = await api.memory.put(['users', ''], 'k', 1).catch((e: unknown) => e);
    expect(empty).toMatchObject({ code: 'MEMORY_INVALID' });
    expect(await memoryOf(store).search(['a'])).toEqual([]);
  });
});
