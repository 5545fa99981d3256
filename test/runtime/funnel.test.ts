import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  all,
  answer,
  any,
  best,
  END,
  graph,
  MemoryStore,
  person,
  type Reducer,
  resume,
  run,
} from '../../src/index.js';

const State = z.object({
  log: z.array(z.string()).default([]),
  n: z.number().default(0),
});

/** A reducer that throws when it meets the word "boom". */
const touchy: Reducer<string[]> = {
  name: 'touchy',
  apply: (current, update) => {
    if (update.includes('boom')) throw new Error('cannot merge boom');
    return [...current, ...update];
  },
};

describe('user code that throws never rejects run(): it is an error value', () => {
  it('a reducer that throws fails the node with REDUCER_FAILED, its stack kept, the run resolves', async () => {
    const g = graph('reduce', { state: State, reducers: { log: touchy } })
      .node('write', () => ({ log: ['boom'] }))
      .edge('write', END)
      .entry('write')
      .compile();

    const result = await run(g, {});

    expect(result.status).toBe('failed');
    if (result.status !== 'failed') return;
    expect(result.error).toMatchObject({
      code: 'REDUCER_FAILED',
      class: 'permanent',
      node: 'write',
      message: 'the reducer of "log" threw: cannot merge boom',
      details: { field: 'log' },
    });
    expect(result.error.stack).toContain('cannot merge boom');
  });

  it('a reducer that throws at a join fails the run; a resume merges again and nothing runs twice', async () => {
    const store = new MemoryStore();
    const calls: string[] = [];
    let broken = true;
    const merging: Reducer<string[]> = {
      name: 'merging',
      apply: (current, update) => {
        if (broken && current.length > 0) throw new Error('the second merge breaks');
        return [...current, ...update];
      },
    };
    const g = graph('join', { state: State, reducers: { log: merging } })
      .node('split', () => ({}))
      .node(
        'a',
        () => {
          calls.push('a');
          return { log: ['a'] };
        },
        { writes: ['log'] },
      )
      .node(
        'b',
        () => {
          calls.push('b');
          return { log: ['b'] };
        },
        { writes: ['log'] },
      )
      .node(
        'merge',
        () => {
          calls.push('merge');
          return {};
        },
        { join: all(), terminal: true },
      )
      .fanOut('split', ['a', 'b'], 'merge')
      .edge('a', 'merge')
      .edge('b', 'merge')
      .entry('split')
      .compile();

    const first = await run(g, {}, { store, runId: 'r' });
    expect(first.status === 'failed' && first.error.code).toBe('REDUCER_FAILED');

    broken = false;
    const second = await resume(store, g, 'r');

    expect(second.status).toBe('succeeded');
    expect(second.state.log).toEqual(['a', 'b']);
    expect(calls.sort()).toEqual(['a', 'b', 'merge']);
  });

  it("a schema refinement that throws is the node's UPDATE_INVALID, not a crash", async () => {
    const Strict = z.object({
      n: z
        .number()
        .default(0)
        .refine((n) => {
          if (n > 1) throw new Error('refinement exploded');
          return true;
        }),
    });
    const g = graph('refine', { state: Strict })
      .node('set', () => ({ n: 5 }))
      .edge('set', END)
      .entry('set')
      .compile();

    const result = await run(g, {});

    expect(result.status === 'failed' && result.error).toMatchObject({
      code: 'UPDATE_INVALID',
      message: expect.stringContaining('refinement exploded'),
    });
  });

  it('a best() score that throws fails the join, and a resume scores again once it is fixed', async () => {
    const store = new MemoryStore();
    let broken = true;
    const g = graph('best', { state: State, reducers: { log: touchy } })
      .node('split', () => ({}))
      .node('a', () => ({ n: 1 }), { writes: ['n'] })
      .node('b', () => ({ n: 2 }), { writes: ['n'] })
      .node('pick', () => ({}), {
        join: best((s: { n: number }) => {
          if (broken) throw new Error('score exploded');
          return s.n;
        }),
        terminal: true,
      })
      .fanOut('split', ['a', 'b'], 'pick')
      .edge('a', 'pick')
      .edge('b', 'pick')
      .entry('split')
      .compile();

    const first = await run(g, {}, { store, runId: 'r' });
    expect(first.status === 'failed' && first.error.code).toBe('JOIN_FAILED');
    expect(first.status === 'failed' && first.error.message).toContain('score exploded');

    broken = false;
    const second = await resume(store, g, 'r');
    expect(second.status).toBe('succeeded');
    expect(second.state.n).toBe(2);
    expect(second.trace.path).toEqual(['pick']);
  });

  it('a retry predicate that throws decides nothing: the failure stands, not retried', async () => {
    let calls = 0;
    const g = graph('when', { state: State })
      .node(
        'fetch',
        () => {
          calls++;
          throw new Error('503');
        },
        {
          retry: {
            attempts: 3,
            when: () => {
              throw new Error('predicate exploded');
            },
          },
        },
      )
      .edge('fetch', END)
      .entry('fetch')
      .compile();

    const result = await run(g, {});

    expect(calls).toBe(1);
    expect(result.status === 'failed' && result.error.message).toBe('503');
  });

  it('a migration that throws is MIGRATION_FAILED, and the stored run is unchanged', async () => {
    const store = new MemoryStore();
    const v1 = graph('m', { state: State })
      .node(
        'wait',
        person({ prompt: 'go?', answer: z.object({ ok: z.boolean() }), update: () => ({}) }),
      )
      .edge('wait', END)
      .entry('wait')
      .compile();
    await run(v1, {}, { store, runId: 'r' });
    const before = await store.getRun('r');
    const v2 = graph('m', {
      state: State,
      stateVersion: 2,
      migrations: {
        1: () => {
          throw new Error('migration exploded');
        },
      },
    })
      .node(
        'wait',
        person({ prompt: 'go?', answer: z.object({ ok: z.boolean() }), update: () => ({}) }),
      )
      .edge('wait', END)
      .entry('wait')
      .compile();

    await expect(resume(store, v2, 'r')).rejects.toMatchObject({
      code: 'MIGRATION_FAILED',
      message: expect.stringContaining('migration exploded'),
    });
    expect((await store.getRun('r'))?.seq).toBe(before?.seq);
  });
});

describe('a node timeout holds for a node that never yields', () => {
  it('a synchronous body that blocks 150 ms past a 20 ms limit ends NODE_TIMEOUT, its late result discarded', async () => {
    const g = graph('blocking', { state: State })
      .node(
        'spin',
        () => {
          const until = Date.now() + 150;
          while (Date.now() < until) {
            // blocks the event loop: no timer can fire
          }
          return { n: 1 };
        },
        { timeoutMs: 20 },
      )
      .edge('spin', END)
      .entry('spin')
      .compile();

    const result = await run(g, {});

    expect(result.status).toBe('failed');
    expect(result.state.n).toBe(0);
    expect(result.status === 'failed' && result.error).toMatchObject({
      code: 'NODE_TIMEOUT',
      class: 'timeout',
      details: { timeoutMs: 20 },
    });
    expect(result.trace.entries[0]?.durationMs).toBeGreaterThanOrEqual(150);
  });
});

describe('a person wait in a branch a join cancelled is closed', () => {
  it('any() over a fast node and a person: the run succeeds, the wait is closed, an answer is refused', async () => {
    const store = new MemoryStore();
    const g = graph('race', { state: State, reducers: { log: touchy } })
      .node('split', () => ({}))
      .node('fast', () => ({ log: ['fast'] }), { writes: ['log'] })
      .node(
        'ask',
        person({
          prompt: 'which one?',
          answer: z.object({ pick: z.string() }),
          update: (a) => ({ log: [a.pick] }),
        }),
        { writes: ['log'] },
      )
      .node('done', () => ({}), { join: any(), terminal: true })
      .fanOut('split', ['fast', 'ask'], 'done')
      .edge('fast', 'done')
      .edge('ask', 'done')
      .entry('split')
      .compile();

    const result = await run(g, {}, { store, runId: 'r' });

    expect(result.status).toBe('succeeded');
    expect(await store.listWaits('r', { open: true })).toEqual([]);
    const [wait] = await store.listWaits('r');
    expect(wait?.closedAt).toEqual(expect.any(Number));
    await expect(
      answer(store, 'r', wait!.requestId, { pick: 'late' }, { by: 'ana' }),
    ).rejects.toMatchObject({ code: 'WAIT_CLOSED' });
    expect((await store.listWaits('r'))[0]?.answer).toBeNull();
  });
});
