import { describe, expect, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import {
  any,
  append,
  END,
  graph,
  MemoryStore,
  person,
  resume,
  run,
  type Store,
} from '../../src/index.js';
import { answer } from '../../src/runtime/ops/answer.js';

// A port of LangGraph.js's own UntrackedValue tests (libs/langgraph-core:
// src/tests/channels.test.ts "UntrackedValueChannel", src/state/values/untracked.test.ts, and
// src/state/schema.test.ts "should handle UntrackedValue with ReducedValue"). LangGraph.js tests
// a channel object; waymark has no channels, so each case is the same behaviour seen through a
// graph: a node writes, a later node (or the run's result, or the store) reads. Where the two
// differ by decision, the test says so.

type Value = string | number | boolean | null | undefined;

/** A graph whose nodes write `writes` in turn to untracked `value`, each recording what it saw. */
function writing(writes: readonly Value[], schema: z.ZodType<Value> = z.any().optional()) {
  const State = z.object({ seen: z.array(z.any()).default([]), value: schema });
  let b = graph('lg-untracked', { state: State, reducers: { seen: append }, untracked: ['value'] })
    // biome-ignore lint/suspicious/noExplicitAny: a builder grown in a loop
    .node('start', () => ({})) as any;
  let last = 'start';
  writes.forEach((value, i) => {
    const name = `w${i}`;
    b = b
      .node(name, (s: { value: Value }) => ({ seen: [s.value], value }), {
        reads: ['value'],
        writes: ['seen', 'value'],
      })
      .edge(last, name);
    last = name;
  });
  return b
    .node('end', (s: { value: Value }) => ({ seen: [s.value] }), {
      reads: ['value'],
      writes: ['seen'],
    })
    .edge(last, 'end')
    .edge('end', END)
    .entry('start')
    .compile();
}

/** What each node saw, in order: the value before the first write, then after each. */
const seenBy = async (writes: readonly Value[], schema?: z.ZodType<Value>) =>
  ((await run(writing(writes, schema), {})).state as { seen: unknown[] }).seen;

describe('UntrackedValueChannel (ported)', () => {
  describe('basic operations', () => {
    it('should store and retrieve the last value', async () => {
      // LangGraph.js: get() throws EmptyChannelError before any update; a waymark field always
      // has a value, so an untracked one starts from its default (here: none, undefined).
      expect(await seenBy([42, 100])).toEqual([undefined, 42, 100]);
    });

    it('should handle falsy values correctly', async () => {
      expect(await seenBy([0, '', false, null])).toEqual([undefined, 0, '', false, null]);
    });

    it('should handle undefined values', async () => {
      const schema = z.number().optional();
      expect(await seenBy([3, undefined], schema)).toEqual([undefined, 3, undefined]);
    });
  });

  describe('checkpoint behavior', () => {
    const Counter = z.object({ value: z.number().default(999), other: z.number().default(0) });
    const approve = person({ prompt: 'go on?', answer: z.boolean(), update: () => ({}) });
    const checkpointed = graph('lg-checkpoint', { state: Counter, untracked: ['value'] })
      .node('set', () => ({ value: 42, other: 1 }), { reads: [], writes: ['value', 'other'] })
      .node('approve', approve)
      .node('read', (s) => ({ other: s.value }), { reads: ['value'], writes: ['other'] })
      .edge('set', 'approve')
      .edge('approve', 'read')
      .edge('read', END)
      .entry('set')
      .compile();

    async function stopped(store: Store) {
      const first = await run(checkpointed, {}, { store, runId: 'c' });
      expect(first.status).toBe('waiting');
      return first;
    }

    it('should return undefined when checkpointing', async () => {
      const store = new MemoryStore();
      const first = await stopped(store);

      expect(first.state.value).toBe(42);
      const kept = JSON.parse((await store.loadRun('c'))!.snapshot.data);
      expect(kept.state).toEqual({ other: 1 });
    });

    it('should reset to empty when restored from checkpoint', async () => {
      const Optional = z.object({ value: z.number().optional(), other: z.number().default(0) });
      const g = graph('lg-empty', { state: Optional, untracked: ['value'] })
        .node('set', () => ({ value: 42 }), { reads: [], writes: ['value'] })
        .node('approve', approve)
        .edge('set', 'approve')
        .edge('approve', END)
        .entry('set')
        .compile();
      const store = new MemoryStore();
      await run(g, {}, { store, runId: 'e' });
      const [wait] = await store.listWaits('e');
      await answer(store, 'e', wait!.requestId, true, { by: 'test' });

      const restored = await resume(store, g, 'e');
      expect(restored.state.value).toBeUndefined();
    });

    it('should use initialValueFactory when restored from checkpoint', async () => {
      const store = new MemoryStore();
      await stopped(store);
      const [wait] = await store.listWaits('c');
      await answer(store, 'c', wait!.requestId, true, { by: 'test' });

      const restored = await resume(store, checkpointed, 'c');
      // The schema's default is the initial value factory: `read` sees it, not the 42.
      expect(restored.state.other).toBe(999);
      expect(restored.state.value).toBe(999);
    });
  });

  describe('guard behavior', () => {
    const Two = z.object({ value: z.number().default(0) });

    it('should throw when multiple updates are provided with guard: true (default)', () => {
      // Two branches that can both write it in one step: refused before the graph runs.
      const b = graph('lg-guard', { state: Two, untracked: ['value'] })
        .node('split', () => ({}))
        .node('one', () => ({ value: 1 }), { reads: [], writes: ['value'] })
        .node('two', () => ({ value: 2 }), { reads: [], writes: ['value'] })
        .node('join', () => ({}), { terminal: true })
        .fanOut('split', ['one', 'two'], 'join')
        .edge('one', 'join')
        .edge('two', 'join');

      expect(() => b.entry('split').compile()).toThrow(/WRITE_CONFLICT/);
    });

    it('should allow multiple updates with guard: false, keeping last value', async () => {
      // No guard option: a reducer on an untracked field is refused (it holds the last value
      // written), and a join that keeps one branch's update (any()) keeps one value.
      expect(
        graph('lg-reduced', {
          state: Two,
          untracked: ['value'],
          reducers: { value: append as never },
        })
          .node('a', () => ({}))
          .edge('a', END)
          .entry('a')
          .validate()
          .map((d) => d.code),
      ).toEqual(['UNTRACKED_INVALID']);
      const first = graph('lg-any', { state: Two, untracked: ['value'] })
        .node('split', () => ({}))
        .node('one', () => ({ value: 1 }), { reads: [], writes: ['value'] })
        .node('two', () => ({ value: 2 }), { reads: [], writes: ['value'] })
        .node('join', () => ({}), { join: any(), terminal: true })
        .fanOut('split', ['one', 'two'], 'join')
        .edge('one', 'join')
        .edge('two', 'join')
        .entry('split')
        .compile();

      expect([1, 2]).toContain((await run(first, {})).state.value);
    });
  });

  describe('initialValueFactory', () => {
    it('should use initial value when no updates have been made', async () => {
      expect(await seenBy([], z.string().default('default'))).toEqual(['default']);
    });

    it('should override initial value with updates', async () => {
      expect(await seenBy(['updated'], z.string().default('default'))).toEqual([
        'default',
        'updated',
      ]);
    });

    it('should handle complex objects from initialValueFactory', async () => {
      const Complex = z.object({
        seen: z.array(z.any()).default([]),
        value: z.object({ count: z.number() }).default(() => ({ count: 0 })),
      });
      const g = graph('lg-complex', {
        state: Complex,
        reducers: { seen: append },
        untracked: ['value'],
      })
        .node('set', (s) => ({ seen: [s.value], value: { count: 5 } }))
        .node('read', (s) => ({ seen: [s.value] }))
        .edge('set', 'read')
        .edge('read', END)
        .entry('set')
        .compile();

      expect((await run(g, {})).state.seen).toEqual([{ count: 0 }, { count: 5 }]);
    });
  });

  it("should have lc_graph_name set to 'UntrackedValue'", () => {
    // The graph's data says which fields are untracked, for renderers, the CLI and stores.
    const g = writing([]);
    expect(g.def.untracked).toEqual(['value']);
  });
});

describe('UntrackedValue (ported)', () => {
  it('should infer ValueType from schema', () => {
    const State = z.object({ temp: z.string().default(''), optionalTemp: z.string().optional() });
    graph('lg-types', { state: State, untracked: ['temp', 'optionalTemp'] }).node('a', (s) => {
      expectTypeOf(s.temp).toEqualTypeOf<string>();
      expectTypeOf(s.optionalTemp).toEqualTypeOf<string | undefined>();
      return { temp: 'x' };
    });
    // @ts-expect-error: only fields of the state can be untracked.
    graph('lg-types', { state: State, untracked: ['nope'] });
  });

  it('isInstance: should identify untracked fields, and reject the others', () => {
    const State = z.object({ a: z.string(), b: z.unknown().optional(), c: z.number().default(0) });
    const g = graph('lg-keys', { state: State, untracked: ['b'] })
      .node('n', () => ({}))
      .edge('n', END)
      .entry('n')
      .compile();

    expect(g.untracked?.fields.has('b')).toBe(true);
    expect(g.untracked?.fields.has('c')).toBe(false);
    // getAllKeys: an untracked field is a field like any other, in schema order.
    expect(g.def.fields).toEqual(['a', 'b', 'c']);
  });

  it('should handle UntrackedValue with ReducedValue', async () => {
    const AgentState = z.object({
      cache: z.record(z.string(), z.string()).optional(),
      results: z.array(z.string()).default([]),
    });
    const g = graph('lg-agent', {
      state: AgentState,
      reducers: { results: append },
      untracked: ['cache'],
    })
      .node('process', () => ({ cache: { key: 'value' }, results: ['result1'] }))
      .edge('process', END)
      .entry('process')
      .compile();
    const store = new MemoryStore();

    const result = await run(g, {}, { store, runId: '1' });
    expect(result.state.results).toEqual(['result1']);
    expect(result.state.cache).toEqual({ key: 'value' });

    // After checkpoint restore, the untracked field is reset.
    const { inspect } = await import('../../src/index.js');
    const state = (await inspect(store, g, '1')).snapshot.state;
    expect(state.cache).toBeUndefined();
    expect(state.results).toEqual(['result1']);
  });
});
