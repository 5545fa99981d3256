import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  all,
  append,
  END,
  graph,
  isWaymarkError,
  resume,
  run,
  type StreamEvent,
  watch,
} from '../../src/index.js';
import { stores } from '../support/stores.js';

// Breakpoints (LangGraph's interruptBefore / interruptAfter): pauseBefore and pauseAfter node
// lists on a run; the run waits at that point, holding no process, and goes on at a resume.

const State = z.object({ log: z.array(z.string()).default([]), n: z.number().default(0) });

function chain(ran: string[]) {
  const body = (name: string) => () => {
    ran.push(name);
    return { log: [name] };
  };
  return graph('bp-chain', { state: State, reducers: { log: append } })
    .node('a', body('a'))
    .node('b', body('b'))
    .node('c', body('c'), { terminal: true })
    .edge('a', 'b')
    .edge('b', 'c')
    .entry('a')
    .compile();
}

const codeOf = (p: Promise<unknown>) =>
  p.then(
    () => 'resolved',
    (e: unknown) => (isWaymarkError(e) ? e.code : String(e)),
  );

describe.each(stores)('breakpoints, with the %s store', (_name, makeStore) => {
  it('pauseBefore: the run waits before the node starts; a resume runs it and the rest', async () => {
    const store = makeStore();
    const ran: string[] = [];
    const g = chain(ran);
    const first = await run(g, {}, { store, runId: 'r1', pauseBefore: ['b'] });
    expect(first.status).toBe('waiting');
    expect(ran).toEqual(['a']);
    const done = await resume(store, g, 'r1');
    expect(done.status).toBe('succeeded');
    expect(ran).toEqual(['a', 'b', 'c']);
    expect(done.state.log).toEqual(['a', 'b', 'c']);
  });

  it('pauseAfter: the run waits once the node completes, before what follows it', async () => {
    const store = makeStore();
    const ran: string[] = [];
    const g = chain(ran);
    const events: StreamEvent[] = [];
    const first = await run(
      g,
      {},
      { store, runId: 'r1', pauseAfter: ['a'], watch: (e) => events.push(e) },
    );
    expect(first.status).toBe('waiting');
    expect(ran).toEqual(['a']);
    expect(events.find((e) => e.type === 'activation.paused')).toMatchObject({
      activation: 'b:1',
      parent: 'a:1',
    });
    expect(events.at(-1)).toMatchObject({ type: 'run', status: 'waiting' });
    const done = await resume(store, g, 'r1');
    expect(done.status).toBe('succeeded');
    expect(ran).toEqual(['a', 'b', 'c']);
    // The stream read back from the store has the pause, then the resume scheduling b.
    const stored: StreamEvent[] = [];
    for await (const e of watch(store, g, 'r1', { follow: false })) stored.push(e);
    const paused = stored.findIndex((e) => e.type === 'activation.paused');
    const scheduled = stored.findIndex(
      (e) => e.type === 'activation.scheduled' && e.activation === 'b:1',
    );
    expect(paused).toBeGreaterThan(-1);
    expect(scheduled).toBeGreaterThan(paused);
  });

  it('kept with the run: a loop pauses before every visit of its node, each resume runs one', async () => {
    const store = makeStore();
    const loop = graph('bp-loop', { state: State, reducers: { log: append } })
      .node('tick', (s) => ({ n: s.n + 1 }), { visits: 5 })
      .route('tick', (s) => (s.n < 3 ? 'tick' : END), ['tick', END])
      .entry('tick')
      .compile();
    let result = await run(loop, {}, { store, runId: 'r1', pauseBefore: ['tick'] });
    const seen: number[] = [];
    while (result.status === 'waiting') {
      seen.push(result.state.n);
      result = await resume(store, loop, 'r1');
    }
    expect(result.status).toBe('succeeded');
    expect(seen).toEqual([0, 1, 2]);
  });

  it('in a fan-out, the branches finish, then the run waits before the join', async () => {
    const store = makeStore();
    const ran: string[] = [];
    const ranOnce = <T>(name: string, update: T): T => {
      ran.push(name);
      return update;
    };
    const fan = graph('bp-fan', { state: State, reducers: { log: append } })
      .node('split', () => ({}))
      .node('x', () => ranOnce('x', { log: ['x'] }), { writes: ['log'] })
      .node('y', () => ranOnce('y', { log: ['y'] }), { writes: ['log'] })
      .node('merge', () => ranOnce('merge', {}), { join: all(), terminal: true })
      .fanOut('split', ['x', 'y'], 'merge')
      .edge('x', 'merge')
      .edge('y', 'merge')
      .entry('split')
      .compile();
    const first = await run(fan, {}, { store, runId: 'f1', pauseBefore: ['merge'] });
    expect(first.status).toBe('waiting');
    expect(ran.sort()).toEqual(['x', 'y']);
    const done = await resume(store, fan, 'f1');
    expect(done.status).toBe('succeeded');
    expect(ran).toContain('merge');
    expect(done.state.log).toEqual(['x', 'y']);
  });

  it('refuses a breakpoint on a node the graph does not have, before anything is recorded', async () => {
    const store = makeStore();
    const g = chain([]);
    expect(await codeOf(run(g, {}, { store, runId: 'r1', pauseBefore: ['nope'] }))).toBe(
      'OPTIONS_INVALID',
    );
    expect(await store.getRun('r1')).toBeUndefined();
  });
});
