import { memo, newRun, step } from './samples.js';
import type { Section } from './section.js';

/** Listing runs, effects and memos. */
export function listingSuite(t: Section): void {
  const { describe, beforeEach, it, expect } = t;
  describe('listing runs', () => {
    beforeEach(async () => {
      await t.store.createRun(newRun('a', { createdAt: 10 }));
      await t.store.createRun(newRun('b', { createdAt: 30, graph: 'other' }));
      await t.store.createRun(newRun('c', { createdAt: 20 }));
      await t.store.createRun(newRun('d', { createdAt: 20, status: 'waiting' }));
      await t.store.commit('a', step(1, { status: 'succeeded', snapshot: '{}' }));
    });

    it('lists the newest runs first; runs created at the same time by id, descending', async () => {
      expect((await t.store.listRuns()).map((r) => r.id)).toEqual(['b', 'd', 'c', 'a']);
    });

    it('lists runs as their records, with the status of their last commit', async () => {
      const [a] = await t.store.listRuns({ status: 'succeeded' });
      expect(a).toEqual(await t.store.getRun('a'));
      expect(a).toMatchObject({ id: 'a', status: 'succeeded', seq: 1 });
    });

    it('filters by one status or any of several', async () => {
      expect((await t.store.listRuns({ status: 'running' })).map((r) => r.id)).toEqual(['b', 'c']);
      expect(
        (await t.store.listRuns({ status: ['waiting', 'succeeded'] })).map((r) => r.id),
      ).toEqual(['d', 'a']);
      expect(await t.store.listRuns({ status: [] })).toEqual([]);
    });

    it('filters by graph name', async () => {
      expect((await t.store.listRuns({ graph: 'other' })).map((r) => r.id)).toEqual(['b']);
      expect(
        (await t.store.listRuns({ graph: 'claims', status: 'running' })).map((r) => r.id),
      ).toEqual(['c']);
      expect(await t.store.listRuns({ graph: 'missing' })).toEqual([]);
    });

    it('filters by labels: a run must carry every one given, with its value', async () => {
      await t.store.createRun(newRun('t1', { createdAt: 40, labels: '{"thread":"t","turn":"1"}' }));
      await t.store.createRun(newRun('t2', { createdAt: 50, labels: '{"thread":"t","turn":"2"}' }));
      await t.store.createRun(newRun('u1', { createdAt: 60, labels: '{"thread":"u"}' }));
      expect((await t.store.listRuns({ labels: { thread: 't' } })).map((r) => r.id)).toEqual([
        't2',
        't1',
      ]);
      expect(
        (await t.store.listRuns({ labels: { thread: 't', turn: '1' } })).map((r) => r.id),
      ).toEqual(['t1']);
      expect(await t.store.listRuns({ labels: { thread: 'none' } })).toEqual([]);
      expect((await t.store.listRuns({ labels: {} })).map((r) => r.id)).toHaveLength(7);
      expect(
        (await t.store.listRuns({ labels: { thread: 't' }, limit: 1 })).map((r) => r.id),
      ).toEqual(['t2']);
    });

    it("pages by position: the runs after a page's last one, none skipped or repeated when runs are created meanwhile", async () => {
      const first = await t.store.listRuns({ limit: 2 });
      expect(first.map((r) => r.id)).toEqual(['b', 'd']);
      const last = first[1]!;
      await t.store.createRun(newRun('e', { createdAt: 25 }));
      await t.store.createRun(newRun('f', { createdAt: 5 }));
      const next = await t.store.listRuns({
        before: { createdAt: last.createdAt, id: last.id },
        limit: 2,
      });
      // c has d's time and a smaller id: it is next; e is newer than the page, so never here.
      expect(next.map((r) => r.id)).toEqual(['c', 'a']);
      expect(
        (await t.store.listRuns({ before: { createdAt: 10, id: 'a' } })).map((r) => r.id),
      ).toEqual(['f']);
      expect(
        (await t.store.listRuns({ before: { createdAt: 30, id: 'b' }, status: 'waiting' })).map(
          (r) => r.id,
        ),
      ).toEqual(['d']);
    });

    it('filters by creation time: since is inclusive, until exclusive', async () => {
      expect((await t.store.listRuns({ since: 20 })).map((r) => r.id)).toEqual(['b', 'd', 'c']);
      expect((await t.store.listRuns({ until: 20 })).map((r) => r.id)).toEqual(['a']);
      expect((await t.store.listRuns({ since: 20, until: 30 })).map((r) => r.id)).toEqual([
        'd',
        'c',
      ]);
      expect(await t.store.listRuns({ since: 31 })).toEqual([]);
    });

    it('limit keeps the newest runs after filtering', async () => {
      expect((await t.store.listRuns({ limit: 2 })).map((r) => r.id)).toEqual(['b', 'd']);
      expect((await t.store.listRuns({ graph: 'claims', limit: 2 })).map((r) => r.id)).toEqual([
        'd',
        'c',
      ]);
      expect(await t.store.listRuns({ limit: 0 })).toEqual([]);
      expect(await t.store.listRuns({ limit: -1 })).toEqual([]);
    });
  });

  describe('effects', () => {
    beforeEach(async () => {
      await t.store.createRun(newRun('r1'));
      await t.store.createRun(newRun('r2'));
    });

    it('the first recorded result of an effect stands; a later record returns it unchanged', async () => {
      const first = { runId: 'r1', key: 'r1/publish:1/post', result: '{"id":7}', at: 5 };
      expect(await t.store.recordEffect(first)).toEqual(first);
      const second = await t.store.recordEffect({ ...first, result: '{"id":8}', at: 6 });
      expect(second).toEqual(first);
      expect(await t.store.getEffect('r1', first.key)).toEqual(first);
    });

    it('of two records racing for one key, both get the one that stands', async () => {
      const key = 'r1/pay:1/charge';
      const [a, b] = await Promise.all([
        t.store.recordEffect({ runId: 'r1', key, result: '"a"', at: 1 }),
        t.store.recordEffect({ runId: 'r1', key, result: '"b"', at: 2 }),
      ]);
      expect(a).toEqual(b);
      expect(await t.store.getEffect('r1', key)).toEqual(a);
    });

    it('an effect key belongs to its run: the same key in another run is another effect', async () => {
      await t.store.recordEffect({ runId: 'r1', key: 'k', result: '"one"', at: 1 });
      expect(await t.store.getEffect('r2', 'k')).toBeUndefined();
      await t.store.recordEffect({ runId: 'r2', key: 'k', result: '"two"', at: 2 });
      expect((await t.store.getEffect('r1', 'k'))?.result).toBe('"one"');
      expect((await t.store.getEffect('r2', 'k'))?.result).toBe('"two"');
    });

    it('an effect never recorded is undefined', async () => {
      expect(await t.store.getEffect('r1', 'never')).toBeUndefined();
    });

    it("lists a run's effects in the order they were recorded, and only its own", async () => {
      expect(await t.store.listEffects('r1')).toEqual([]);
      const b = { runId: 'r1', key: 'r1/publish:1/post', result: '{"id":7}', at: 5 };
      const a = { runId: 'r1', key: 'r1/notify:1/mail', result: '"sent"', at: 3 };
      const c = { runId: 'r1', key: 'r1/notify:1/slack', result: '"ok"', at: 5 };
      await t.store.recordEffect(b);
      await t.store.recordEffect(c);
      await t.store.recordEffect(a);
      await t.store.recordEffect({ runId: 'r2', key: 'k', result: '1', at: 1 });
      // By time; two at the same time by key.
      expect(await t.store.listEffects('r1')).toEqual([a, c, b]);
      expect((await t.store.listEffects('r2')).map((e) => e.key)).toEqual(['k']);
      await expect(t.store.listEffects('nope')).rejects.toMatchObject({ code: 'RUN_NOT_FOUND' });
    });
  });

  describe('memos', () => {
    it('finds the memo recorded last for a node, node version and input hash, from any run', async () => {
      await t.store.putMemo(memo({ runId: 'r1', output: '"first"' }));
      await t.store.putMemo(memo({ runId: 'r2', output: '"second"' }));
      expect(await t.store.findMemo('claims', 'search', 1, 'in-1')).toEqual(
        memo({ runId: 'r2', output: '"second"' }),
      );
    });

    it("clearMemos forgets one node's memos, or a whole graph's, and says how many", async () => {
      await t.store.putMemo(memo());
      await t.store.putMemo(memo({ inputHash: 'in-2' }));
      await t.store.putMemo(memo({ node: 'verify' }));
      await t.store.putMemo(memo({ graph: 'other' }));
      expect(await t.store.clearMemos('claims', 'search')).toBe(2);
      expect(await t.store.findMemo('claims', 'search', 1, 'in-1')).toBeUndefined();
      expect((await t.store.findMemo('claims', 'verify', 1, 'in-1')) !== undefined).toBe(true);
      expect(await t.store.clearMemos('claims')).toBe(1);
      expect(await t.store.findMemo('claims', 'verify', 1, 'in-1')).toBeUndefined();
      expect((await t.store.findMemo('other', 'search', 1, 'in-1')) !== undefined).toBe(true);
      expect(await t.store.clearMemos('claims')).toBe(0);
    });

    it('a memo is found only when graph, node, node version and input hash all match', async () => {
      await t.store.putMemo(memo());
      expect(await t.store.findMemo('claims', 'search', 1, 'in-1')).toEqual(memo());
      expect(await t.store.findMemo('claims', 'search', 2, 'in-1')).toBeUndefined();
      expect(await t.store.findMemo('claims', 'search', 1, 'in-2')).toBeUndefined();
      expect(await t.store.findMemo('claims', 'verify', 1, 'in-1')).toBeUndefined();
      expect(await t.store.findMemo('other', 'search', 1, 'in-1')).toBeUndefined();
    });

    it('memos of other versions or inputs do not hide the matching one', async () => {
      await t.store.putMemo(memo({ output: '"v1"' }));
      await t.store.putMemo(memo({ nodeVersion: 2, output: '"v2"' }));
      await t.store.putMemo(memo({ inputHash: 'in-9', output: '"in-9"' }));
      expect((await t.store.findMemo('claims', 'search', 1, 'in-1'))?.output).toBe('"v1"');
      expect((await t.store.findMemo('claims', 'search', 2, 'in-1'))?.output).toBe('"v2"');
    });
  });
}
