import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { WaymarkClient } from '../../src/client.js';
import { END, event, graph, isWaymarkError } from '../../src/index.js';
import { type Served, serve } from '../../src/server.js';
import { SqliteStore } from '../../src/sqlite.js';

// Signals over HTTP and waymark/client: POST /runs/:id/signals/:name, POST
// /graphs/:graph/signals/:name (the key in the body) and GET /signals, against a real server.

const State = z.object({ orderId: z.string(), paidCents: z.number().default(0) });
const orders = graph('client-orders', { state: State })
  .node(
    'paid',
    event({
      name: 'payment',
      schema: z.object({ paidCents: z.number().int().positive() }),
      key: (s: z.infer<typeof State>) => s.orderId,
    }),
  )
  .node('ship', () => ({}))
  .edge('paid', 'ship')
  .edge('ship', END)
  .entry('paid')
  .compile();

let dir: string;
let store: SqliteStore;
let served: Served;
let api: WaymarkClient;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'waymark-signals-'));
  store = new SqliteStore({ path: join(dir, 'runs.db') });
  served = await serve({ store, graphs: [orders], token: 't' });
  api = new WaymarkClient({ url: served.url, token: 't' });
});
afterAll(async () => {
  await served?.close();
  await store?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function settled(runId: string) {
  const until = Date.now() + 10_000;
  for (;;) {
    const status = (await store.getRun(runId))?.status;
    if (status === 'succeeded' || Date.now() > until) return status;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const code = (p: Promise<unknown>) =>
  p.then(
    () => 'resolved',
    (e: unknown) => (isWaymarkError(e) ? e.code : String(e)),
  );

describe('signals over HTTP', () => {
  it('a signal to a waiting run is delivered once and moves the run on', async () => {
    await api.start('client-orders', { orderId: 'o-1' }, { runId: 'h1' });
    expect(await code(api.signal('h1', 'payment', { paidCents: 0 }))).toBe('SIGNAL_INVALID');
    expect(await code(api.signal('h1', 'refund', {}))).toBe('SIGNAL_UNKNOWN');
    const sent = await api.signal('h1', 'payment', { paidCents: 100 }, { id: 'evt_h1' });
    expect(sent).toMatchObject({ outcome: 'delivered', signal: { consumedRun: 'h1' } });
    expect(typeof sent.signal.sentAt).toBe('number');
    expect(await settled('h1')).toBe('succeeded');
    const again = await api.signal('h1', 'payment', { paidCents: 100 }, { id: 'evt_h1' });
    expect(again.outcome).toBe('duplicate');
  });

  it('a { graph, key } signal sent early is kept, listed, and taken by the run that gets there', async () => {
    const kept = await api.signal({ graph: 'client-orders', key: 'o-2' }, 'payment', {
      paidCents: 5,
    });
    expect(kept.outcome).toBe('kept');
    expect((await api.signals({ state: 'kept' })).signals.map((s) => s.key)).toEqual(['o-2']);
    await api.start('client-orders', { orderId: 'o-2' }, { runId: 'h2' });
    expect(await settled('h2')).toBe('succeeded');
    expect((await api.signals({ state: 'kept' })).signals).toEqual([]);
    expect((await api.signals({ state: 'consumed' })).signals).toHaveLength(2);
  });
});
