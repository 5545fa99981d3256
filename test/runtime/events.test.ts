import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  END,
  event,
  expireSignals,
  graph,
  isWaymarkError,
  listSignals,
  resume,
  run,
  type Store,
  signal,
} from '../../src/index.js';
import { pgStoreForFile, skipReason } from '../store/fixtures/postgres.js';
import { fakeClock } from '../support/clock.js';
import { stores } from '../support/stores.js';

// An event node waits for a signal from outside: the run is `waiting` with no process held,
// and `signal()` delivers a payload, checked by the node's schema, once.

const State = z.object({
  orderId: z.string(),
  paidCents: z.number().default(0),
  log: z.array(z.string()).default([]),
});

const orders = () =>
  graph('orders', { state: State })
    .node('bill', (s) => ({ log: [...s.log, `bill ${s.orderId}`] }))
    .node(
      'paid',
      event({
        name: 'payment',
        schema: z.object({ paidCents: z.number().int().positive() }),
        key: (s: z.infer<typeof State>) => s.orderId,
      }),
    )
    .node('ship', (s) => ({ log: [...s.log, `ship ${s.paidCents}`] }))
    .edge('bill', 'paid')
    .edge('paid', 'ship')
    .edge('ship', END)
    .entry('bill')
    .compile();

const code = (p: Promise<unknown>) =>
  p.then(
    () => 'resolved',
    (e: unknown) => (isWaymarkError(e) ? e.code : String(e)),
  );

const pg = pgStoreForFile();
const all: [string, () => Store][] = [
  ...stores,
  ...(skipReason === undefined ? [['postgres', () => pg.store] as [string, () => Store]] : []),
];

describe.each(all)('event nodes, with the %s store', (_name, makeStore) => {
  it('a run stops waiting on its event; a signal to the run delivers the payload as the update', async () => {
    const store = makeStore();
    const g = orders();
    const first = await run(g, { orderId: 'o-7' }, { store, runId: 'r1' });
    expect(first.status).toBe('waiting');
    const [wait] = await store.listWaits('r1', { open: true });
    expect(JSON.parse(wait!.request).event).toEqual({
      name: 'payment',
      graph: 'orders',
      key: 'o-7',
    });

    const sent = await signal(store, 'r1', 'payment', { paidCents: 1200 }, { graph: g, id: 's1' });
    expect(sent.outcome).toBe('delivered');
    const done = await resume(store, g, 'r1');
    expect(done.status).toBe('succeeded');
    expect(done.status === 'succeeded' && done.state.log).toEqual(['bill o-7', 'ship 1200']);
  });

  it('a { graph, key } signal goes to the run waiting under that key', async () => {
    const store = makeStore();
    const g = orders();
    await run(g, { orderId: 'o-1' }, { store, runId: 'a' });
    await run(g, { orderId: 'o-2' }, { store, runId: 'b' });
    const sent = await signal(store, { graph: g, key: 'o-2' }, 'payment', { paidCents: 5 });
    expect(sent.outcome).toBe('delivered');
    expect(sent.signal.consumedRun).toBe('b');
    expect((await resume(store, g, 'a')).status).toBe('waiting');
    expect((await resume(store, g, 'b')).status).toBe('succeeded');
  });

  it('a signal sent before the run reaches its event is kept, then taken when it does', async () => {
    const store = makeStore();
    const g = orders();
    const early = await signal(store, { graph: g, key: 'o-9' }, 'payment', { paidCents: 300 });
    expect(early.outcome).toBe('kept');
    expect((await listSignals(store, { state: 'kept' })).map((s) => s.id)).toEqual([
      early.signal.id,
    ]);

    const result = await run(g, { orderId: 'o-9' }, { store, runId: 'r9' });

    expect(result.status).toBe('succeeded');
    expect(result.status === 'succeeded' && result.state.log).toEqual(['bill o-9', 'ship 300']);
    const [taken] = await listSignals(store, { state: 'consumed' });
    expect(taken).toMatchObject({ id: early.signal.id, consumedRun: 'r9' });
    expect(await listSignals(store, { state: 'kept' })).toEqual([]);
  });

  it('a wait its host never registered (killed right after the commit) still takes a signal to its run', async () => {
    const store = makeStore();
    const g = orders();
    // The host dies between the commit that opens the wait and its ask for kept signals.
    const dying = new Proxy(store, {
      get(target, key, receiver) {
        if (key === 'matchSignal') return () => Promise.reject(new Error('the process died'));
        const value = Reflect.get(target, key, receiver);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    await run(g, { orderId: 'o-3' }, { store: dying, runId: 'r3' }).catch(String);
    expect(await store.listWaits('r3', { open: true })).toHaveLength(1);
    const sent = await signal(store, 'r3', 'payment', { paidCents: 4 }, { graph: g });
    expect(sent.outcome).toBe('delivered');
    expect((await resume(store, g, 'r3')).status).toBe('succeeded');
  });

  it('each signal is delivered once: a second one with the same id is a no-op', async () => {
    const store = makeStore();
    const g = orders();
    await run(g, { orderId: 'o-7' }, { store, runId: 'r1' });
    const once = await signal(store, 'r1', 'payment', { paidCents: 1 }, { graph: g, id: 'evt_1' });
    const twice = await signal(store, 'r1', 'payment', { paidCents: 2 }, { graph: g, id: 'evt_1' });
    expect([once.outcome, twice.outcome]).toEqual(['delivered', 'duplicate']);
    expect(JSON.parse(twice.signal.payload)).toEqual({ paidCents: 1 });
    expect(await listSignals(store)).toHaveLength(1);
    const done = await resume(store, g, 'r1');
    expect(done.status === 'succeeded' && done.state.paidCents).toBe(1);
  });

  it('a payload the schema refuses is SIGNAL_INVALID and records nothing', async () => {
    const store = makeStore();
    const g = orders();
    await run(g, { orderId: 'o-7' }, { store, runId: 'r1' });
    expect(await code(signal(store, 'r1', 'payment', { paidCents: -3 }, { graph: g }))).toBe(
      'SIGNAL_INVALID',
    );
    // Without the graph, the open wait's stored JSON Schema checks it.
    expect(await code(signal(store, 'r1', 'payment', { paidCents: 'x' }))).toBe('SIGNAL_INVALID');
    expect(await listSignals(store)).toEqual([]);
    expect(await store.listWaits('r1', { open: true })).toHaveLength(1);
  });

  it('an unknown run, or a name the graph has no event node for, is SIGNAL_UNKNOWN', async () => {
    const store = makeStore();
    const g = orders();
    await run(g, { orderId: 'o-7' }, { store, runId: 'r1' });
    expect(await code(signal(store, 'nope', 'payment', { paidCents: 1 }))).toBe('SIGNAL_UNKNOWN');
    expect(await code(signal(store, 'r1', 'refund', { paidCents: 1 }, { graph: g }))).toBe(
      'SIGNAL_UNKNOWN',
    );
    expect(await code(signal(store, { graph: g, key: 'o-7' }, 'refund', {}))).toBe(
      'SIGNAL_UNKNOWN',
    );
    expect(await listSignals(store)).toEqual([]);
  });

  it('an unmatched signal expires after its ttl and is then never delivered', async () => {
    const store = makeStore();
    const g = orders();
    const clock = fakeClock(1_000);
    await signal(
      store,
      { graph: g, key: 'o-5' },
      'payment',
      { paidCents: 9 },
      { clock, ttlMs: 500 },
    );
    await clock.advance(600);
    expect(await listSignals(store, { state: 'expired', at: clock.now() })).toHaveLength(1);
    const result = await run(g, { orderId: 'o-5' }, { store, runId: 'r5', clock });
    expect(result.status).toBe('waiting');
    expect(await expireSignals(store, { clock })).toBe(1);
    expect(await listSignals(store)).toEqual([]);
  });

  it('an event wait with a timeout closes with WAIT_TIMED_OUT, routed by onError; a late signal is refused', async () => {
    const store = makeStore();
    const clock = fakeClock(1_000);
    const g = graph('timed', { state: State })
      .node(
        'paid',
        event({ name: 'payment', schema: z.object({ paidCents: z.number() }), timeoutMs: 1_000 }),
        { onError: 'chase' },
      )
      .node('chase', (s) => ({ log: [...s.log, 'chase'] }))
      .edge('paid', END)
      .edge('chase', END)
      .entry('paid')
      .compile();
    expect((await run(g, { orderId: 'o' }, { store, runId: 't', clock })).status).toBe('waiting');
    await clock.advance(1_500);
    const resumed = await resume(store, g, 't', { clock });
    expect(resumed.status === 'succeeded' && resumed.state.log).toEqual(['chase']);
    const [closed] = await store.listWaits('t');
    expect(closed?.closedAt).not.toBeNull();
    expect(await code(signal(store, 't', 'payment', { paidCents: 1 }, { graph: g, clock }))).toBe(
      'RUN_NOT_RESUMABLE',
    );
  });
});
