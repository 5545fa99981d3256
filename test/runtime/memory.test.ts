import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  END,
  graph,
  type Memory,
  MemoryStore,
  memoryOf,
  type NodeContext,
  permanentError,
  resume,
  run,
  type Store,
} from '../../src/index.js';
import { stores } from '../support/stores.js';

// The memory kept across runs: memoryOf(store) in a program, ctx.memory in a node body, whose
// writes are effects of the run, so a body run again does not write twice.

const State = z.object({ user: z.string(), seen: z.array(z.string()).default([]) });

/** A graph of one node, `remember`, whose body is `body`. */
function oneNode(
  body: (s: z.infer<typeof State>, ctx: NodeContext) => Promise<Partial<z.infer<typeof State>>>,
  retry = 1,
) {
  return graph('memory', { state: State, version: 1 })
    .node('remember', body, { retry: { attempts: retry, backoffMs: 1 } })
    .edge('remember', END)
    .entry('remember')
    .compile();
}

/** The store, counting the writes of memory items that reach it. */
function counting(store: Store): { store: Store; writes: string[] } {
  const writes: string[] = [];
  const wrapped = new Proxy(store, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver);
      if (key === 'putItem' || key === 'deleteItem') {
        return (...args: unknown[]) => {
          writes.push(String(key));
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      }
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return { store: wrapped, writes };
}

describe('memoryOf', () => {
  it('puts, gets, searches and deletes JSON values under a namespace (LangGraph BaseStore)', async () => {
    const memory: Memory = memoryOf(new MemoryStore());
    const put = await memory.put(['users', 'u1'], 'prefs', { theme: 'dark', size: 2 });
    expect(put).toMatchObject({ namespace: ['users', 'u1'], key: 'prefs', expiresAt: null });
    expect(await memory.get<{ theme: string }>(['users', 'u1'], 'prefs')).toMatchObject({
      value: { theme: 'dark', size: 2 },
    });
    await memory.put(['users', 'u2'], 'prefs', { theme: 'light' });
    const dark = await memory.search(['users'], { filter: { theme: 'dark' } });
    expect(dark.map((item) => item.namespace)).toEqual([['users', 'u1']]);
    expect(await memory.delete(['users', 'u1'], 'prefs')).toBe(true);
    expect(await memory.get(['users', 'u1'], 'prefs')).toBeUndefined();
  });

  it('a search returns 10 items unless it asks for another limit, as LangGraph', async () => {
    const memory = memoryOf(new MemoryStore());
    for (let i = 0; i < 12; i++) await memory.put(['n'], `k${String(i).padStart(2, '0')}`, i);
    expect(await memory.search(['n'])).toHaveLength(10);
    expect((await memory.search(['n'], { offset: 10 })).map((item) => item.value)).toEqual([
      10, 11,
    ]);
    expect(await memory.search(['n'], { limit: 20 })).toHaveLength(12);
  });

  it('an item with a time to live is gone once it passes, by the store clock', async () => {
    let now = 1_000;
    const memory = memoryOf(new MemoryStore({ now: () => now }));
    expect(await memory.put(['s'], 'token', 'abc', { ttlMs: 500 })).toMatchObject({
      createdAt: 1_000,
      expiresAt: 1_500,
    });
    now = 1_499;
    expect(await memory.get(['s'], 'token')).toMatchObject({ value: 'abc' });
    now = 1_500;
    expect(await memory.get(['s'], 'token')).toBeUndefined();
  });

  it('a value JSON would not give back as it is is refused with MEMORY_INVALID, and nothing is written', async () => {
    const store = new MemoryStore();
    const memory = memoryOf(store);
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    for (const value of [
      undefined,
      { at: new Date(0) },
      { n: Number.NaN },
      [() => 1],
      cycle,
      { big: 1n },
    ]) {
      await expect(memory.put(['a'], 'k', value)).rejects.toMatchObject({
        code: 'MEMORY_INVALID',
      });
    }
    expect(await store.searchItems({ prefix: [] })).toEqual([]);
  });
});

describe.each(stores)('ctx.memory on the %s store', (_name, makeStore) => {
  it('what one run puts, a later run of another graph reads', async () => {
    const store = makeStore();
    const write = oneNode(async (s, ctx) => {
      await ctx.memory.put(['users', s.user], 'topic', { topic: 'pricing' });
      return {};
    });
    const read = oneNode(async (s, ctx) => {
      const item = await ctx.memory.get<{ topic: string }>(['users', s.user], 'topic');
      const found = await ctx.memory.search(['users'], { filter: { topic: 'pricing' } });
      return { seen: [item?.value.topic ?? 'nothing', `${found.length} found`] };
    });
    await run(write, { user: 'u1' }, { store });
    const later = await run(read, { user: 'u1' }, { store });
    expect(later).toMatchObject({ status: 'succeeded', state: { seen: ['pricing', '1 found'] } });
    await store.close();
  });

  it('a retried attempt finds its put and delete recorded: the store is written once each', async () => {
    const { store, writes } = counting(makeStore());
    const g = oneNode(async (s, ctx) => {
      const put = await ctx.memory.put(['users', s.user], 'n', { attempt: ctx.attempt });
      await ctx.memory.delete(['users', s.user], 'old');
      if (ctx.attempt === 1) throw new Error('the connection dropped');
      return { seen: [`put in attempt ${(put.value as { attempt: number }).attempt}`] };
    }, 2);
    const result = await run(g, { user: 'u1' }, { store });
    expect(result).toMatchObject({ status: 'succeeded', state: { seen: ['put in attempt 1'] } });
    expect(writes).toEqual(['putItem', 'deleteItem']);
    expect(await memoryOf(store).get(['users', 'u1'], 'n')).toMatchObject({
      value: { attempt: 1 },
    });
    await store.close();
  });

  it('a resumed run runs the failed body again, and its put is not made twice', async () => {
    const { store, writes } = counting(makeStore());
    let fail = true;
    const g = oneNode(async (s, ctx) => {
      await ctx.memory.put(['users', s.user], 'visits', { n: 1 });
      if (fail) throw permanentError('NODE_FAILED', 'the mail server said no');
      return { seen: ['done'] };
    });
    const first = await run(g, { user: 'u1' }, { store });
    expect(first.status).toBe('failed');
    fail = false;
    const again = await resume(store, g, first.runId);
    expect(again).toMatchObject({ status: 'succeeded', state: { seen: ['done'] } });
    expect(writes).toEqual(['putItem']);
    await store.close();
  });

  it('two puts of one address in one body are two writes, the last one standing', async () => {
    const { store, writes } = counting(makeStore());
    const g = oneNode(async (s, ctx) => {
      await ctx.memory.put(['users', s.user], 'step', 'first');
      await ctx.memory.put(['users', s.user], 'step', 'second');
      return {};
    });
    await run(g, { user: 'u1' }, { store });
    expect(writes).toEqual(['putItem', 'putItem']);
    expect(await memoryOf(store).get(['users', 'u1'], 'step')).toMatchObject({ value: 'second' });
    await store.close();
  });

  it('a put refused with MEMORY_INVALID fails the node with that code and records nothing', async () => {
    const store = makeStore();
    const g = oneNode(async (_s, ctx) => {
      await ctx.memory.put(['has.period'], 'k', 1);
      return {};
    });
    const result = await run(g, { user: 'u1' }, { store });
    expect(result).toMatchObject({ status: 'failed', error: { code: 'MEMORY_INVALID' } });
    expect(await store.listEffects(result.runId)).toEqual([]);
    await store.close();
  });
});

describe('ctx.memory in a run without a store', () => {
  it('keeps items for the run only', async () => {
    const g = graph('scratch', { state: State, version: 1 })
      .node('write', async (s, ctx) => {
        await ctx.memory.put(['scratch'], s.user, 'noted');
        return {};
      })
      .node('read', async (s, ctx) => ({
        seen: [String((await ctx.memory.get(['scratch'], s.user))?.value)],
      }))
      .edge('write', 'read')
      .edge('read', END)
      .entry('write')
      .compile();
    expect((await run(g, { user: 'u1' })).state.seen).toEqual(['noted']);
    const other = oneNode(async (s, ctx) => ({
      seen: [String((await ctx.memory.get(['scratch'], s.user))?.value)],
    }));
    expect((await run(other, { user: 'u1' })).state.seen).toEqual(['undefined']);
  });
});
