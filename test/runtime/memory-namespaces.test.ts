import { beforeEach, describe, expect, it } from 'vitest';
import { type Memory, MemoryStore, memoryOf } from '../../src/index.js';

// LangGraph.js's own tests of listNamespaces (libs/checkpoint/src/tests/namespace.test.ts and
// store.test.ts's InMemoryStore ones), ported to memoryOf(store). LangGraph sorts some results
// before comparing them; so do these, where it does.

let memory: Memory;

beforeEach(() => {
  memory = memoryOf(new MemoryStore());
});

async function putAll(namespaces: string[][]): Promise<void> {
  for (const [i, ns] of namespaces.entries())
    await memory.put(ns, `id_${i}`, { data: `value_${String(i).padStart(2, '0')}` });
}

const sorted = (list: string[][]) => [...list].sort();

describe('listNamespaces (LangGraph.js namespace.test.ts)', () => {
  it('handles basic namespace operations', async () => {
    await putAll([
      ['a', 'b', 'c'],
      ['a', 'b', 'd', 'e'],
      ['a', 'b', 'd', 'i'],
      ['a', 'b', 'f'],
      ['a', 'c', 'f'],
      ['b', 'a', 'f'],
      ['users', '123'],
      ['users', '456', 'settings'],
      ['admin', 'users', '789'],
    ]);
    expect(sorted(await memory.listNamespaces({ prefix: ['a', 'b'] }))).toEqual(
      sorted([
        ['a', 'b', 'c'],
        ['a', 'b', 'd', 'e'],
        ['a', 'b', 'd', 'i'],
        ['a', 'b', 'f'],
      ]),
    );
    expect(sorted(await memory.listNamespaces({ suffix: ['f'] }))).toEqual(
      sorted([
        ['a', 'b', 'f'],
        ['a', 'c', 'f'],
        ['b', 'a', 'f'],
      ]),
    );
    expect(sorted(await memory.listNamespaces({ prefix: ['a'], suffix: ['f'] }))).toEqual(
      sorted([
        ['a', 'b', 'f'],
        ['a', 'c', 'f'],
      ]),
    );
    expect(sorted(await memory.listNamespaces({ prefix: ['a', 'b'], maxDepth: 3 }))).toEqual(
      sorted([
        ['a', 'b', 'c'],
        ['a', 'b', 'd'],
        ['a', 'b', 'f'],
      ]),
    );
    expect(await memory.listNamespaces({ prefix: ['a', 'b'], limit: 2 })).toEqual([
      ['a', 'b', 'c'],
      ['a', 'b', 'd', 'e'],
    ]);
    expect(await memory.listNamespaces({ prefix: ['a', 'b'], offset: 2 })).toEqual([
      ['a', 'b', 'd', 'i'],
      ['a', 'b', 'f'],
    ]);
  });

  it('handles wildcards in namespace operations', async () => {
    await putAll([
      ['users', '123'],
      ['users', '456'],
      ['users', '789', 'settings'],
      ['admin', 'users', '789'],
      ['guests', '123'],
      ['guests', '456', 'preferences'],
    ]);
    expect(sorted(await memory.listNamespaces({ prefix: ['users', '*'] }))).toEqual(
      sorted([
        ['users', '123'],
        ['users', '456'],
        ['users', '789', 'settings'],
      ]),
    );
    expect(await memory.listNamespaces({ suffix: ['*', 'preferences'] })).toEqual([
      ['guests', '456', 'preferences'],
    ]);
    expect(
      await memory.listNamespaces({ prefix: ['*', 'users'], suffix: ['*', 'settings'] }),
    ).toEqual([]);
    await memory.put(['admin', 'users', 'settings', '789'], 'foo', { data: 'some_val' });
    expect(
      await memory.listNamespaces({ prefix: ['*', 'users'], suffix: ['settings', '*'] }),
    ).toEqual([['admin', 'users', 'settings', '789']]);
  });

  it('handles pagination in namespace operations', async () => {
    for (let i = 0; i < 20; i++) {
      const n = String(i).padStart(2, '0');
      await memory.put(['namespace', `sub_${n}`], `id_${n}`, { data: `value_${n}` });
    }
    const page = (from: number) =>
      Array.from({ length: 5 }, (_, i) => [
        'namespace',
        `sub_${String(from + i).padStart(2, '0')}`,
      ]);
    for (const offset of [0, 5, 15]) {
      expect(await memory.listNamespaces({ prefix: ['namespace'], limit: 5, offset })).toEqual(
        page(offset),
      );
    }
  });

  it('handles maxDepth in namespace operations', async () => {
    await putAll([
      ['a', 'b', 'c', 'd'],
      ['a', 'b', 'c', 'e'],
      ['a', 'b', 'f'],
      ['a', 'g'],
      ['h', 'i', 'j', 'k'],
    ]);
    expect(sorted(await memory.listNamespaces({ maxDepth: 2 }))).toEqual(
      sorted([
        ['a', 'b'],
        ['a', 'g'],
        ['h', 'i'],
      ]),
    );
  });

  it('handles an empty store in namespace operations', async () => {
    expect(await memory.listNamespaces({})).toEqual([]);
  });
});

describe('listNamespaces (LangGraph.js store.test.ts, InMemoryStore)', () => {
  beforeEach(async () => {
    await memory.put(['a', 'b', 'c'], '1', { value: 1 });
    await memory.put(['a', 'b', 'd'], '2', { value: 2 });
    await memory.put(['x', 'y', 'z'], '3', { value: 3 });
  });

  it('lists every namespace', async () => {
    expect(await memory.listNamespaces({})).toEqual([
      ['a', 'b', 'c'],
      ['a', 'b', 'd'],
      ['x', 'y', 'z'],
    ]);
  });

  it('filters namespaces by prefix', async () => {
    expect(await memory.listNamespaces({ prefix: ['a'] })).toEqual([
      ['a', 'b', 'c'],
      ['a', 'b', 'd'],
    ]);
  });

  it('applies maxDepth to the results, listing each cut namespace once', async () => {
    expect(await memory.listNamespaces({ maxDepth: 2 })).toEqual([
      ['a', 'b'],
      ['x', 'y'],
    ]);
  });

  it('refuses a maxDepth, limit or offset that is not a whole number with MEMORY_INVALID', async () => {
    await expect(memory.listNamespaces({ maxDepth: 0 })).rejects.toMatchObject({
      code: 'MEMORY_INVALID',
    });
    await expect(memory.listNamespaces({ limit: 1.5 })).rejects.toMatchObject({
      code: 'MEMORY_INVALID',
    });
  });
});
