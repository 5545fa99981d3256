import { keepsRates, type RateRequest, RATE_HOLD_MS as W } from '../../store/rates.js';
import type { Section } from './section.js';

/** Rate limits on shared resources: a sliding minute of admissions, tokens and 429 blocks. */
export function ratesSuite(t: Section): void {
  const { describe, it, expect } = t;
  const T = 1_000_000;
  const stores = () => {
    const store = t.store;
    if (!keepsRates(store)) throw new Error('the store keeps no rate limits');
    return store;
  };
  const ask = (id: string, at: number, limits: Omit<RateRequest, 'resource' | 'id' | 'at'>) => ({
    resource: 'openai',
    id,
    at,
    ...limits,
  });

  describe('rate limits', () => {
    it('admits up to requestsPerMinute in a minute, then refuses until the oldest that counts leaves the window', async () => {
      const store = stores();
      for (const [i, id] of ['a', 'b', 'c'].entries())
        expect(await store.admitRate(ask(id, T + i * 10, { requestsPerMinute: 3 }))).toEqual({
          admitted: true,
        });
      expect(await store.admitRate(ask('d', T + 30, { requestsPerMinute: 3 }))).toEqual({
        admitted: false,
        until: T + W,
        reason: 'requests',
      });
      // With room for 2, the second of the three must leave before a fourth fits.
      expect(await store.admitRate(ask('d', T + 30, { requestsPerMinute: 2 }))).toEqual({
        admitted: false,
        until: T + 10 + W,
        reason: 'requests',
      });
      expect(await store.rateWindow('openai', T + 30)).toEqual({
        resource: 'openai',
        requests: 3,
        tokens: 0,
      });
    });

    it('the window slides: a minute after an admission there is room again, and admissions older than the window are deleted', async () => {
      const store = stores();
      const rpm = { requestsPerMinute: 2 };
      await store.admitRate(ask('a', T, rpm));
      await store.admitRate(ask('b', T + 1_000, rpm));
      expect(await store.admitRate(ask('c', T + W - 1, rpm))).toEqual({
        admitted: false,
        until: T + W,
        reason: 'requests',
      });
      expect(await store.admitRate(ask('c', T + W, rpm))).toEqual({ admitted: true });
      // Read as of a time when `a` was still in the window: it is gone, deleted by the admission.
      expect(await store.rateWindow('openai', T + 500)).toMatchObject({ requests: 2 });
      expect(await store.admitRate(ask('d', T + W + 1_000, rpm))).toEqual({ admitted: true });
    });

    it('asking again under an admitted id admits it again without counting it twice, even once the window is full or blocked', async () => {
      const store = stores();
      const rpm = { requestsPerMinute: 2 };
      expect(await store.admitRate(ask('x', T, rpm))).toEqual({ admitted: true });
      expect(await store.admitRate(ask('x', T + 5, rpm))).toEqual({ admitted: true });
      expect(await store.rateWindow('openai', T + 5)).toMatchObject({ requests: 1 });
      expect(await store.admitRate(ask('y', T + 6, rpm))).toEqual({ admitted: true });
      expect(await store.admitRate(ask('z', T + 7, rpm))).toMatchObject({ admitted: false });
      await store.blockRate('openai', T + 10_000);
      expect(await store.admitRate(ask('x', T + 8, rpm))).toEqual({ admitted: true });
      expect(await store.rateWindow('openai', T + 8)).toMatchObject({ requests: 2 });
    });

    it('reserved tokens count against tokensPerMinute until the attempt settles them with what it used', async () => {
      const store = stores();
      const tpm = (reserveTokens: number) => ({ tokensPerMinute: 100, reserveTokens });
      expect(await store.admitRate(ask('a', T, tpm(60)))).toEqual({ admitted: true });
      expect(await store.rateWindow('openai', T)).toMatchObject({ requests: 1, tokens: 60 });
      expect(await store.admitRate(ask('b', T + 10, tpm(50)))).toEqual({
        admitted: false,
        until: T + W,
        reason: 'tokens',
      });
      await store.settleRate('openai', 'a', 30);
      await store.settleRate('openai', 'gone', 1_000);
      expect(await store.rateWindow('openai', T + 10)).toMatchObject({ requests: 1, tokens: 30 });
      expect(await store.admitRate(ask('b', T + 10, tpm(50)))).toEqual({ admitted: true });
      // No reservation still needs one token: a window at its limit refuses it.
      await store.settleRate('openai', 'b', 70);
      expect(await store.admitRate(ask('c', T + 20, tpm(0)))).toEqual({
        admitted: false,
        until: T + W,
        reason: 'tokens',
      });
    });

    it('a refusal by tokens lasts until enough of the oldest admissions have left the window, and the later of two refusals wins', async () => {
      const store = stores();
      for (const [i, [id, reserve]] of (
        [
          ['a', 20],
          ['b', 30],
          ['c', 40],
        ] as const
      ).entries())
        await store.admitRate(
          ask(id, T + i * 100, { tokensPerMinute: 100, reserveTokens: reserve }),
        );
      // 90 + 50 > 100; without a, 70 + 50 still is; without b too, 40 + 50 fits: b's time counts.
      expect(
        await store.admitRate(ask('d', T + 300, { tokensPerMinute: 100, reserveTokens: 50 })),
      ).toEqual({ admitted: false, until: T + 100 + W, reason: 'tokens' });
      expect(
        await store.admitRate(
          ask('d', T + 300, { requestsPerMinute: 3, tokensPerMinute: 100, reserveTokens: 50 }),
        ),
      ).toEqual({ admitted: false, until: T + 100 + W, reason: 'tokens' });
      expect(
        await store.admitRate(
          ask('d', T + 300, { requestsPerMinute: 1, tokensPerMinute: 100, reserveTokens: 50 }),
        ),
      ).toEqual({ admitted: false, until: T + 200 + W, reason: 'requests' });
      expect(await store.rateWindow('openai', T + 300)).toMatchObject({ requests: 3, tokens: 90 });
    });

    it('a reservation larger than the minute allows is admitted into an empty window, which it then fills', async () => {
      const store = stores();
      const tpm = (reserveTokens: number) => ({ tokensPerMinute: 100, reserveTokens });
      expect(await store.admitRate(ask('big', T, tpm(500)))).toEqual({ admitted: true });
      expect(await store.rateWindow('openai', T)).toMatchObject({ tokens: 500 });
      expect(await store.admitRate(ask('next', T + 1, tpm(0)))).toEqual({
        admitted: false,
        until: T + W,
        reason: 'tokens',
      });
    });

    it('a 429 blocks the resource until its Retry-After, and a shorter block later does not shorten it', async () => {
      const store = stores();
      await store.blockRate('openai', T + 5_000);
      expect(await store.admitRate(ask('a', T, {}))).toEqual({
        admitted: false,
        until: T + 5_000,
        reason: 'blocked',
      });
      await store.blockRate('openai', T + 1_000);
      expect(await store.admitRate(ask('a', T + 2_000, { requestsPerMinute: 10 }))).toEqual({
        admitted: false,
        until: T + 5_000,
        reason: 'blocked',
      });
      expect(await store.rateWindow('openai', T + 2_000)).toEqual({
        resource: 'openai',
        requests: 0,
        tokens: 0,
        blockedUntil: T + 5_000,
      });
      expect(await store.admitRate(ask('a', T + 5_000, {}))).toEqual({ admitted: true });
      expect(await store.rateWindow('openai', T + 5_000)).toEqual({
        resource: 'openai',
        requests: 1,
        tokens: 0,
      });
      await store.blockRate('openai', T + 9_000);
      expect(await store.rateWindow('openai', T + 5_000)).toMatchObject({
        blockedUntil: T + 9_000,
      });
    });

    it('rateWindow counts the last minute before its time, and deletes nothing', async () => {
      const store = stores();
      expect(await store.rateWindow('nothing', T)).toEqual({
        resource: 'nothing',
        requests: 0,
        tokens: 0,
      });
      await store.admitRate(ask('a', T, { reserveTokens: 10 }));
      await store.admitRate(ask('b', T + W / 2, { reserveTokens: 5 }));
      expect(await store.rateWindow('openai', T + W)).toEqual({
        resource: 'openai',
        requests: 1,
        tokens: 5,
      });
      expect(await store.rateWindow('openai', T + 1)).toMatchObject({ requests: 2, tokens: 15 });
    });

    it('two resources are counted and blocked apart', async () => {
      const store = stores();
      const rpm = { requestsPerMinute: 1 };
      expect(await store.admitRate({ resource: 'a', id: 'x', at: T, ...rpm })).toEqual({
        admitted: true,
      });
      expect(await store.admitRate({ resource: 'b', id: 'x', at: T, ...rpm })).toEqual({
        admitted: true,
      });
      await store.blockRate('a', T + 5_000);
      expect(await store.rateWindow('b', T)).toEqual({ resource: 'b', requests: 1, tokens: 0 });
      expect(await store.admitRate({ resource: 'b', id: 'y', at: T + W, ...rpm })).toEqual({
        admitted: true,
      });
      expect(await store.admitRate({ resource: 'a', id: 'y', at: T + 1, ...rpm })).toMatchObject({
        reason: 'blocked',
      });
    });

    it('of 20 admissions asked at once with room for 5, exactly 5 are admitted', async () => {
      const store = stores();
      const decisions = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          store.admitRate(ask(`r${i}`, T + (i % 3), { requestsPerMinute: 5 })),
        ),
      );
      expect(decisions.filter((d) => d.admitted)).toHaveLength(5);
      expect(decisions.filter((d) => !d.admitted && d.reason === 'requests')).toHaveLength(15);
      expect(await store.rateWindow('openai', T + 2)).toMatchObject({ requests: 5 });
    });
  });
}
