import type { ItemRecord, ItemSearch } from '../../store/store.js';
import type { Section } from './section.js';

// The memory items kept across runs (ItemStore). Its first tests port LangGraph.js's own tests
// of InMemoryStore and BaseStore (libs/checkpoint/src/tests/store.test.ts and namespace.test.ts:
// get, put, search, delete, invalid namespaces); the rest hold what waymark adds (whole-part
// prefixes, scalar filters, pages, a time to live by the store's clock).

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The namespace and key of each item found, as `a.b/key`. */
function found(items: readonly ItemRecord[]): string[] {
  return items.map((item) => `${item.namespace.join('.')}/${item.key}`);
}

/** Put, get, search and delete of memory items. */
export function itemsSuite(t: Section): void {
  const { describe, it, expect, rejectsWith } = t;
  const put = (namespace: string[], key: string, value: unknown, ttlMs?: number) =>
    t.store.putItem({ namespace, key, value: JSON.stringify(value), ttlMs: ttlMs ?? null });
  const search = async (search: ItemSearch) => found(await t.store.searchItems(search));

  describe('memory items (LangGraph.js InMemoryStore tests)', () => {
    it('an item put is got back with its namespace, key and value', async () => {
      await put(['test'], '123', { value: 1 });
      expect(await t.store.getItem(['test'], '123')).toMatchObject({
        namespace: ['test'],
        key: '123',
        value: '{"value":1}',
        expiresAt: null,
      });
    });

    it('a search of a namespace returns each of its items', async () => {
      await put(['test'], '123', { value: 1 });
      await put(['test'], '456', { value: 2 });
      const items = await t.store.searchItems({ prefix: ['test'] });
      expect(items).toHaveLength(2);
      expect(items[0]).toMatchObject({ value: '{"value":1}', key: '123', namespace: ['test'] });
      expect(items[1]).toMatchObject({ value: '{"value":2}', key: '456', namespace: ['test'] });
    });

    it('a deleted item is gone', async () => {
      await put(['test'], '123', { value: 1 });
      expect(await t.store.deleteItem(['test'], '123')).toBe(true);
      expect(await t.store.getItem(['test'], '123')).toBeUndefined();
      expect(await t.store.deleteItem(['test'], '123')).toBe(false);
    });

    it('an empty namespace, an empty part or a part with a period is refused with MEMORY_INVALID', async () => {
      await rejectsWith(put([], 'foo', { foo: 'bar' }), 'MEMORY_INVALID');
      await rejectsWith(put(['the', 'thing.about'], 'foo', { foo: 'bar' }), 'MEMORY_INVALID');
      await rejectsWith(put(['some', 'fun', ''], 'foo', { foo: 'bar' }), 'MEMORY_INVALID');
      await rejectsWith(t.store.getItem([], 'foo'), 'MEMORY_INVALID');
      await put(['foo', 'langgraph', 'foo'], 'bar', { foo: 'bar' });
      expect(await search({ prefix: ['foo', 'langgraph', 'foo'] })).toEqual([
        'foo.langgraph.foo/bar',
      ]);
    });
  });

  describe('memory items', () => {
    it('an empty key, a part with a control character, or a part or key with U+0000 or a lone surrogate, is refused with MEMORY_INVALID', async () => {
      await rejectsWith(put(['a'], '', 1), 'MEMORY_INVALID');
      await rejectsWith(put(['a\u0000b'], 'k', 1), 'MEMORY_INVALID');
      await rejectsWith(put(['a\u0001'], 'k', 1), 'MEMORY_INVALID');
      await rejectsWith(put(['a\nb'], 'k', 1), 'MEMORY_INVALID');
      await rejectsWith(put(['a'], 'k\u0000', 1), 'MEMORY_INVALID');
      await rejectsWith(put(['a'], 'k\ud800', 1), 'MEMORY_INVALID');
      await rejectsWith(t.store.deleteItem(['a'], ''), 'MEMORY_INVALID');
      expect(await t.store.searchItems({ prefix: [] })).toEqual([]);
    });

    it('putting again replaces the value and keeps when the item was created, by the store clock', async () => {
      const before = Date.now();
      const first = await put(['users', 'u1'], 'prefs', { theme: 'dark' });
      expect(Math.abs(first.createdAt - before) < 10_000).toBe(true);
      expect(first.updatedAt).toBe(first.createdAt);
      await sleep(5);
      const second = await put(['users', 'u1'], 'prefs', { theme: 'light' });
      expect(second.createdAt).toBe(first.createdAt);
      expect(second.updatedAt >= first.updatedAt).toBe(true);
      expect(await t.store.getItem(['users', 'u1'], 'prefs')).toEqual(second);
    });

    it('keys and parts are kept as given, whatever their characters', async () => {
      await put(['naïve', 'a/b', 'x y', '"q"'], 'key/with ünïcode 🙂 and "quotes"', [1, 'two']);
      const item = await t.store.getItem(
        ['naïve', 'a/b', 'x y', '"q"'],
        'key/with ünïcode 🙂 and "quotes"',
      );
      expect(item).toMatchObject({ value: '[1,"two"]' });
      expect(await search({ prefix: ['naïve', 'a/b'] })).toEqual([
        'naïve.a/b.x y."q"/key/with ünïcode 🙂 and "quotes"',
      ]);
    });

    it('a prefix matches whole parts: its own namespace and those under it, not ["ab"] for ["a"]', async () => {
      await put(['a'], 'k', 1);
      await put(['a', 'b'], 'k', 1);
      await put(['a', 'b', 'c'], 'k', 1);
      await put(['ab'], 'k', 1);
      await put(['b'], 'k', 1);
      expect(await search({ prefix: ['a'] })).toEqual(['a/k', 'a.b/k', 'a.b.c/k']);
      expect(await search({ prefix: ['a', 'b'] })).toEqual(['a.b/k', 'a.b.c/k']);
      expect(await search({ prefix: [] })).toEqual(['a/k', 'a.b/k', 'a.b.c/k', 'ab/k', 'b/k']);
      expect(await search({ prefix: ['a', 'b', 'c', 'd'] })).toEqual([]);
      expect(await search({ prefix: [] })).toHaveLength(5);
    });

    it('a filter keeps the items whose value has each field equal to the given scalar', async () => {
      await put(['docs'], 'd1', { type: 'report', status: 'active', n: 1, ok: true, x: null });
      await put(['docs'], 'd2', { type: 'report', status: 'draft', n: 2, ok: false });
      await put(['docs'], 'd3', { type: 'memo', 'a.b': 'dotted', n: 1.5 });
      await put(['docs'], 'd4', ['report']);
      await put(['docs'], 'd5', 'report');
      await put(['docs'], 'd6', { type: ['report'], nested: { type: 'report' } });
      expect(await search({ prefix: ['docs'], filter: { type: 'report' } })).toEqual([
        'docs/d1',
        'docs/d2',
      ]);
      expect(
        await search({ prefix: ['docs'], filter: { type: 'report', status: 'active' } }),
      ).toEqual(['docs/d1']);
      expect(await search({ prefix: ['docs'], filter: { n: 1 } })).toEqual(['docs/d1']);
      expect(await search({ prefix: ['docs'], filter: { n: 1.5 } })).toEqual(['docs/d3']);
      expect(await search({ prefix: ['docs'], filter: { ok: false } })).toEqual(['docs/d2']);
      expect(await search({ prefix: ['docs'], filter: { x: null } })).toEqual(['docs/d1']);
      expect(await search({ prefix: ['docs'], filter: { 'a.b': 'dotted' } })).toEqual(['docs/d3']);
      expect(await search({ prefix: ['docs'], filter: { n: '1' } })).toEqual([]);
      expect(await search({ prefix: ['docs'], filter: {} })).toHaveLength(6);
    });

    it('limit and offset page through the matches in order', async () => {
      for (const key of ['k5', 'k3', 'k1', 'k4', 'k2']) await put(['p'], key, { key });
      expect(await search({ prefix: ['p'], limit: 2 })).toEqual(['p/k1', 'p/k2']);
      expect(await search({ prefix: ['p'], limit: 2, offset: 2 })).toEqual(['p/k3', 'p/k4']);
      expect(await search({ prefix: ['p'], offset: 4 })).toEqual(['p/k5']);
      expect(await search({ prefix: ['p'], limit: 0 })).toEqual([]);
      await rejectsWith(t.store.searchItems({ prefix: ['p'], limit: -1 }), 'MEMORY_INVALID');
      await rejectsWith(t.store.searchItems({ prefix: ['p'], offset: 0.5 }), 'MEMORY_INVALID');
    });

    it('an item past its time to live is neither got, found nor deleted', async () => {
      const kept = await put(['t'], 'kept', { v: 1 }, 60_000);
      expect(kept.expiresAt).toBe(kept.updatedAt + 60_000);
      await put(['t'], 'brief', { v: 2 }, 1);
      await sleep(30);
      expect(await t.store.getItem(['t'], 'brief')).toBeUndefined();
      expect(await search({ prefix: ['t'] })).toEqual(['t/kept']);
      expect(await search({ prefix: ['t'], filter: { v: 2 } })).toEqual([]);
      expect(await t.store.deleteItem(['t'], 'brief')).toBe(false);
      await rejectsWith(put(['t'], 'k', 1, 0), 'MEMORY_INVALID');
      await rejectsWith(put(['t'], 'k', 1, Number.NaN), 'MEMORY_INVALID');
    });

    it('lists each namespace that holds a live item once, under a whole-part prefix, in order', async () => {
      await put(['a', 'b'], 'k1', 1);
      await put(['a', 'b'], 'k2', 1);
      await put(['a'], 'k', 1);
      await put(['ab'], 'k', 1);
      await put(['a', 'c'], 'brief', 1, 1);
      await sleep(30);
      expect(await t.store.listItemNamespaces([])).toEqual([['a'], ['a', 'b'], ['ab']]);
      expect(await t.store.listItemNamespaces(['a'])).toEqual([['a'], ['a', 'b']]);
      expect(await t.store.listItemNamespaces(['a', 'b', 'c'])).toEqual([]);
      await rejectsWith(t.store.listItemNamespaces(['a.b']), 'MEMORY_INVALID');
    });

    it('an item put again after it expired is a new one; a put without ttlMs never expires', async () => {
      const old = await put(['t'], 'k', { v: 1 }, 1);
      await sleep(30);
      const again = await put(['t'], 'k', { v: 2 });
      expect(again.createdAt > old.createdAt).toBe(true);
      expect(again.expiresAt).toBeNull();
      expect(await t.store.getItem(['t'], 'k')).toMatchObject({ value: '{"v":2}' });
    });
  });
}
