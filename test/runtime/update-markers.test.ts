// overwrite(), remove() and clear() in a node's update (LangGraph.js: Overwrite, RemoveMessage,
// REMOVE_ALL_MESSAGES): what a reducer cannot be asked to do with a value. See docs/reducers.md.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  append,
  clear,
  END,
  enqueue,
  graph,
  inspect,
  mergeByKey,
  overwrite,
  patchState,
  type Reducer,
  remove,
  resume,
  run,
  type Store,
  union,
} from '../../src/index.js';
import { checkReducer } from '../../src/testing/index.js';
import { describePg, pgStoreForFile } from '../store/fixtures/postgres.js';
import { dyingAt, stores } from '../support/stores.js';
import { workUntilSettled } from '../support/worker-runs.js';

const Message = z.object({ id: z.string(), text: z.string() });
const Chat = z.object({
  messages: z.array(Message).default([]),
  notes: z.array(z.string()).default([]),
  tags: z.array(z.string()).default([]),
  total: z.number().default(0),
});
type Chat = z.output<typeof Chat>;
const reducers = {
  messages: mergeByKey('id'),
  notes: append,
  tags: union,
  total: { name: 'sum', apply: (a: number, b: number) => a + b } as Reducer<number>,
};

const m = (id: string) => ({ id, text: `text of ${id}` });

/** say (3 messages, 2 notes, 2 tags) -> edit (the update under test) -> tail -> END. */
function chat(edit: (s: Chat) => Partial<Chat>) {
  return graph('chat', { state: Chat, reducers })
    .node('say', () => ({
      messages: [m('m1'), m('m2'), m('m3')],
      notes: ['a', 'b', 'a'],
      tags: ['x', 'y'],
      total: 5,
    }))
    .node('edit', edit)
    .node('tail', () => ({}))
    .edge('say', 'edit')
    .edge('edit', 'tail')
    .edge('tail', END)
    .entry('say')
    .compile();
}

describe('markers in an update', () => {
  it('remove() takes messages out by id, as RemoveMessage does (ported from LangGraph.js)', async () => {
    const result = await run(
      chat(() => ({ messages: remove('m1', 'm3') })),
      {},
    );
    expect(result.status).toBe('succeeded');
    expect(result.state.messages).toEqual([m('m2')]);
  });

  it('remove() on append and union takes out every equal value, keeping the order of the rest', async () => {
    const result = await run(
      chat(() => ({ notes: remove('a'), tags: remove('y') })),
      {},
    );
    expect(result.state.notes).toEqual(['b']);
    expect(result.state.tags).toEqual(['x']);
  });

  it('clear() empties a list whatever its reducer, as REMOVE_ALL_MESSAGES does', async () => {
    const result = await run(
      chat(() => ({ messages: clear(), notes: clear() })),
      {},
    );
    expect(result.state.messages).toEqual([]);
    expect(result.state.notes).toEqual([]);
  });

  it('overwrite() sets a reduced field whole, bypassing its reducer, as Overwrite does', async () => {
    const result = await run(
      chat(() => ({ notes: overwrite(['summary']), total: overwrite(1) })),
      {},
    );
    expect(result.state.notes).toEqual(['summary']);
    expect(result.state.total).toBe(1);
  });

  it("an overwrite()'s value is checked by the field's schema, and remove() needs a reducer that removes", async () => {
    const wrongType = await run(
      chat(() => ({ notes: overwrite([3] as unknown as string[]) })),
      {},
    );
    expect(wrongType.status === 'failed' && wrongType.error).toMatchObject({
      code: 'UPDATE_INVALID',
      node: 'edit',
      message: expect.stringContaining('wrote an invalid "notes" with overwrite()'),
    });

    const noRemove = await run(
      chat(() => ({ total: remove(1) as unknown as number })),
      {},
    );
    expect(noRemove.status === 'failed' && noRemove.error).toMatchObject({
      code: 'UPDATE_INVALID',
      message: expect.stringContaining('reducer "sum" does not remove'),
    });
  });

  it("an object shaped like a marker that no marker function made (a model's output, say) is refused", async () => {
    const forged = { '@waymark': 'overwrite', value: ['injected'] } as unknown as string[];
    const result = await run(
      chat(() => ({ notes: forged })),
      {},
    );
    expect(result.status === 'failed' && result.error).toMatchObject({
      code: 'UPDATE_INVALID',
      message: expect.stringContaining('shaped like a waymark marker'),
    });
  });

  it('branches of a map each remove their own message, and the join keeps what none removed', async () => {
    const Forget = Chat.extend({ drop: z.array(z.string()).default([]) });
    const g = graph('forget', { state: Forget, reducers })
      .node('say', () => ({ messages: [m('m1'), m('m2'), m('m3'), m('m4')], drop: ['m1', 'm3'] }))
      .node('drop', (_s, ctx) => ({ messages: remove(ctx.item as string) }), {
        writes: ['messages'],
      })
      .node('joined', () => ({}), { join: { kind: 'all' } })
      .map('say', { over: 'drop', branch: 'drop', join: 'joined', concurrency: 2 })
      .edge('drop', 'joined')
      .edge('joined', END)
      .entry('say')
      .compile();

    const result = await run(g, {});

    expect(result.status).toBe('succeeded');
    expect(result.state.messages).toEqual([m('m2'), m('m4')]);
  });

  it("a subgraph's node clears a field of its own state", async () => {
    const Child = z.object({ items: z.array(z.string()).default([]) });
    const child = graph('child', { state: Child, reducers: { items: append } })
      .node('fill', () => ({ items: ['p', 'q'] }))
      .node('empty', () => ({ items: clear() }))
      .node('refill', () => ({ items: ['r'] }))
      .edge('fill', 'empty')
      .edge('empty', 'refill')
      .edge('refill', END)
      .entry('fill')
      .compile();
    const Parent = z.object({ out: z.array(z.string()).default([]) });
    const g = graph('parent', { state: Parent })
      .subgraph('inner', child, { input: () => ({}), output: { out: 'items' } })
      .edge('inner', END)
      .entry('inner')
      .compile();

    const result = await run(g, {});

    expect(result.status).toBe('succeeded');
    expect(result.state.out).toEqual(['r']);
  });
});

describe.each(stores)('markers on %s: recorded as written, replayed the same', (_, makeStore) => {
  it('the history holds the marker; a run that died after it resumes to the same state', async () => {
    const g = chat(() => ({ messages: remove('m2'), notes: clear(), total: overwrite(10) }));
    const store = makeStore();
    // Seq 1 is the start, 2 say's completion, 3 edit's; the commit of tail's never lands.
    const crashed = await run(g, {}, { store: dyingAt(store, 4), runId: 'r' }).catch(
      (e: unknown) => e,
    );
    expect(String(crashed)).toContain('the process died');

    const edit = await completionOf(store, 'r', 'edit');
    expect(edit?.update).toEqual({
      messages: { '@waymark': 'remove', items: ['m2'] },
      notes: { '@waymark': 'clear' },
      total: { '@waymark': 'overwrite', value: 10 },
    });

    const resumed = await resume(store, g, 'r');

    expect(resumed.status).toBe('succeeded');
    expect(resumed.state).toEqual({
      messages: [m('m1'), m('m3')],
      notes: [],
      tags: ['x', 'y'],
      total: 10,
    });
  });

  it('a patch may remove() and clear() as a node may', async () => {
    const g = graph('waits', { state: Chat, reducers })
      .node('say', () => ({ messages: [m('m1'), m('m2')], notes: ['n'], tags: ['t'] }))
      .node('hold', () => ({}))
      .edge('say', 'hold')
      .edge('hold', END)
      .entry('say')
      .compile();
    const store = makeStore();
    await run(g, {}, { store, runId: 'p', pauseBefore: ['hold'] });

    await patchState(
      store,
      g,
      'p',
      { messages: remove('m1'), notes: clear() },
      { by: 'test', reason: 'forget m1' },
    );
    // The JSON form, as the HTTP API and `waymark patch --set` send it.
    const json = { tags: { '@waymark': 'clear' } } as unknown as { tags: string[] };
    await patchState(store, g, 'p', json, { by: 'api', reason: 'no tags' });
    const result = await resume(store, g, 'p');

    expect(result.state.messages).toEqual([m('m2')]);
    expect(result.state.notes).toEqual([]);
    expect(result.state.tags).toEqual([]);
  });
});

describe('the removal laws, by checkReducer', () => {
  it('hold for append, union and mergeByKey, and fail for a removal that depends on order', () => {
    const strings = fc.array(fc.constantFrom('a', 'b', 'c'), { maxLength: 6 });
    const items = fc.array(fc.constantFrom('a', 'b', 'c'), { maxLength: 2 });
    expect(checkReducer(append, strings, { removes: items, seed: 1 }).removal).toEqual({
      holds: true,
    });
    expect(checkReducer(union, strings, { removes: items, seed: 1 }).removal).toEqual({
      holds: true,
    });
    const records = fc.array(fc.record({ id: fc.constantFrom('a', 'b', 'c'), text: fc.string() }), {
      maxLength: 6,
    });
    expect(checkReducer(mergeByKey('id'), records, { removes: items, seed: 1 }).removal).toEqual({
      holds: true,
    });

    // Removes only the first of the items it is given: a second removal then takes more.
    const firstOnly: Reducer<string[]> = {
      name: 'firstOnly',
      apply: (a, b) => [...a, ...b],
      remove: (current, xs) => {
        const at = current.indexOf(xs[0] as string);
        return at === -1 ? current : current.filter((_, i) => i !== at);
      },
    };
    expect(checkReducer(firstOnly, strings, { removes: items, seed: 1 }).removal).toMatchObject({
      holds: false,
    });
  });
});

const db = pgStoreForFile();

describePg('markers through a worker on PostgreSQL', () => {
  it('a worker applies remove(), clear() and overwrite() and records them as a node wrote them', async () => {
    const g = chat(() => ({ messages: remove('m1'), notes: clear(), total: overwrite(2) }));
    const id = await enqueue(db.store, g, {});
    await workUntilSettled(db.store, [g], [id]);
    const edit = await completionOf(db.store, id, 'edit');
    expect(edit?.update).toMatchObject({ notes: { '@waymark': 'clear' } });
    const view = await inspect(db.store, g, id);
    expect(view.snapshot.state).toEqual({
      messages: [m('m2'), m('m3')],
      notes: [],
      tags: ['x', 'y'],
      total: 2,
    });
  });
});

/** The completion event of `node` as the store holds it: what a replay applies. */
async function completionOf(
  store: Store,
  runId: string,
  node: string,
): Promise<{ update: unknown } | undefined> {
  const events = await store.events(runId);
  return events
    .map((e) => JSON.parse(e.event) as { type: string; activation: string; update: unknown })
    .find((e) => e.type === 'completed' && e.activation.startsWith(`${node}:`));
}
