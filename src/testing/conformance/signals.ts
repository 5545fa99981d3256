import { keepsSignals, type SignalRecord, type SignalStore } from '../../store/signal-store.js';
import type { Store } from '../../store/store.js';
import { servesWorkers } from '../../store/work-queue.js';
import { newRun, sampleCommit, wait } from './samples.js';
import type { Section } from './section.js';

/** A signal as `sendSignal` takes it: to run r1's graph `claims` under key k1, by default. */
function sample(id: string, overrides: Partial<SignalRecord> = {}): SignalRecord {
  return {
    id,
    graph: 'claims',
    runId: null,
    key: 'k1',
    name: 'payment',
    payload: `{"id":"${id}"}`,
    sentAt: 1_000,
    expiresAt: 10_000,
    consumedRun: null,
    consumedWait: null,
    consumedAt: null,
    ...overrides,
  };
}

const listening = { runId: 'r1', requestId: 'q1', graph: 'claims', name: 'payment', key: 'k1' };

/**
 * Signals for event waits: kept, delivered once, matched by run or by key, expired. A store
 * that keeps no signals (no `SignalStore`) passes these without running them.
 */
export function signalsSuite(t: Section): void {
  const { describe, beforeEach, it, expect } = t;
  const signals = (): (Store & SignalStore) | undefined =>
    keepsSignals(t.store) ? t.store : undefined;
  describe('signals', () => {
    beforeEach(async () => {
      await t.store.createRun(newRun('r1'));
      await t.store.openWait(wait('r1', 'q1'));
    });

    it('a signal no wait listens for is kept; a second one with its id is a no-op', async () => {
      const store = signals();
      if (store === undefined) return;
      expect(await store.sendSignal(sample('s1'))).toEqual({
        outcome: 'kept',
        signal: sample('s1'),
      });
      const again = await store.sendSignal(sample('s1', { payload: '"other"' }));
      expect(again).toEqual({ outcome: 'duplicate', signal: sample('s1') });
      expect(await store.listSignals({ state: 'kept', at: 2_000 })).toEqual([sample('s1')]);
    });

    it('a wait that asks takes the oldest kept signal for its key, answered by signal:<id>, and wakes its run', async () => {
      const store = signals();
      if (store === undefined) return;
      await store.sendSignal(sample('late', { sentAt: 1_500 }));
      await store.sendSignal(sample('early', { sentAt: 1_200 }));
      const took = await store.matchSignal(listening, 3_000);
      expect(took).toEqual({
        ...sample('early', { sentAt: 1_200 }),
        consumedRun: 'r1',
        consumedWait: 'q1',
        consumedAt: 3_000,
      });
      expect(await store.listWaits('r1')).toMatchObject([
        { answer: '{"id":"early"}', answeredBy: 'signal:early', answeredAt: 3_000 },
      ]);
      if (servesWorkers(store))
        expect(await store.inbox('r1')).toMatchObject([{ runId: 'r1', attempt: null }]);
      expect((await store.listSignals({ state: 'kept', at: 3_000 })).map((s) => s.id)).toEqual([
        'late',
      ]);
      // Its wait is answered: it takes no second one.
      expect(await store.matchSignal(listening, 3_100)).toBeUndefined();
    });

    it('a signal to a wait that listens is delivered at once, to its run or under its key', async () => {
      const store = signals();
      if (store === undefined) return;
      expect(await store.matchSignal(listening, 1_500)).toBeUndefined();
      const sent = await store.sendSignal(sample('s1', { runId: 'r1', key: null, sentAt: 2_000 }));
      expect(sent.outcome).toBe('delivered');
      expect(sent.signal).toMatchObject({
        consumedRun: 'r1',
        consumedWait: 'q1',
        consumedAt: 2_000,
      });
      expect(await store.listWaits('r1', { open: true })).toEqual([]);
    });

    it('a signal of another name, graph, key or run is not delivered', async () => {
      const store = signals();
      if (store === undefined) return;
      await store.matchSignal(listening, 1_500);
      for (const other of [
        sample('name', { name: 'refund' }),
        sample('graph', { graph: 'orders' }),
        sample('key', { key: 'k2' }),
        sample('run', { runId: 'r2', key: null }),
      ])
        expect((await store.sendSignal(other)).outcome).toBe('kept');
      expect(await store.matchSignal(listening, 2_000)).toBeUndefined();
      expect(await store.listWaits('r1', { open: true })).toHaveLength(1);
    });

    it('an expired signal is never delivered, and expireSignals deletes it', async () => {
      const store = signals();
      if (store === undefined) return;
      await store.sendSignal(sample('old', { expiresAt: 2_000 }));
      expect(await store.matchSignal(listening, 2_500)).toBeUndefined();
      expect((await store.listSignals({ state: 'expired', at: 2_500 })).map((s) => s.id)).toEqual([
        'old',
      ]);
      expect(await store.listSignals({ state: 'kept', at: 2_500 })).toEqual([]);
      expect(await store.expireSignals(2_500)).toBe(1);
      expect(await store.listSignals()).toEqual([]);
      expect(await store.listWaits('r1', { open: true })).toHaveLength(1);
    });

    it('of two signals racing for one listening wait, one is delivered and the other kept', async () => {
      const store = signals();
      if (store === undefined) return;
      await store.matchSignal(listening, 1_500);
      const sent = await Promise.all([
        store.sendSignal(sample('a', { sentAt: 2_000 })),
        store.sendSignal(sample('b', { sentAt: 2_000 })),
      ]);
      expect(sent.map((s) => s.outcome).sort()).toEqual(['delivered', 'kept']);
      expect(await store.listSignals({ state: 'consumed' })).toHaveLength(1);
    });

    it('a closed wait takes no signal', async () => {
      const store = signals();
      if (store === undefined) return;
      await store.commit('r1', sampleCommit(1, { status: 'waiting', waits: { close: ['q1'] } }));
      await store.sendSignal(sample('s1'));
      expect(await store.matchSignal(listening, 2_000)).toBeUndefined();
      expect(await store.redeliverSignal('s1', 2_000)).toBeUndefined();
    });
  });
}
