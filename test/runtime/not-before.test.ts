import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  END,
  enqueue,
  graph,
  isWaymarkError,
  person,
  resume,
  run,
  Worker,
} from '../../src/index.js';
import { fakeClock } from '../support/clock.js';
import { stores } from '../support/stores.js';

// A node's `notBefore` holds its body until a time the state gives: the run sleeps durably
// before the node, as at a sleep node (a timer row, nothing held), and when the time has come
// the node's body runs, once, under the same activation.

const State = z.object({ sendAt: z.number().default(0), sent: z.number().default(0) });
const day = 86_400_000;

/** draft -> send (not before sendAt) -> END, counting the bodies of send. */
function scheduled(bodies: { send: number }) {
  return graph('newsletter', { state: State })
    .node('draft', () => ({}))
    .node(
      'send',
      (s) => {
        bodies.send++;
        return { sent: s.sent + 1 };
      },
      { notBefore: (s) => new Date(s.sendAt) },
    )
    .edge('draft', 'send')
    .edge('send', END)
    .entry('draft')
    .compile();
}

describe.each(stores)('a node not before a time, with the %s store', (_name, makeStore) => {
  it('sleeps until the time, then runs the body once; a resume before it is due changes nothing', async () => {
    const store = makeStore();
    const clock = fakeClock(1_000);
    const bodies = { send: 0 };
    const g = scheduled(bodies);

    const held = await run(g, { sendAt: 1_000 + 2 * day }, { store, runId: 'r', clock });

    expect(held.status).toBe('waiting');
    expect(held.status === 'waiting' && held.wakesAt).toBe(1_000 + 2 * day);
    expect(bodies.send).toBe(0);
    expect(await store.listTimers('r')).toEqual([
      { runId: 'r', id: 'sleep:send:1', at: 1_000 + 2 * day },
    ]);

    await clock.advance(day);
    const seq = (await store.getRun('r'))?.seq;
    expect((await resume(store, g, 'r', { clock })).status).toBe('waiting');
    expect((await store.getRun('r'))?.seq).toBe(seq);

    await clock.advance(day);
    const done = await resume(store, g, 'r', { clock });
    expect(done.status).toBe('succeeded');
    expect(done.state.sent).toBe(1);
    expect(bodies.send).toBe(1);
    expect(done.trace.path).toEqual(['send']);
    expect(await store.listTimers('r')).toEqual([]);
  });

  it('runs the body at once when the time has passed', async () => {
    const bodies = { send: 0 };
    const result = await run(scheduled(bodies), { sendAt: 0 }, { store: makeStore() });
    expect(result.status).toBe('succeeded');
    expect(bodies.send).toBe(1);
  });
});

describe('a node not before a time, on a worker', () => {
  it('runs the body once when it is due', async () => {
    const { MemoryStore } = await import('../../src/index.js');
    const store = new MemoryStore();
    const bodies = { send: 0 };
    const g = scheduled(bodies);
    const runId = await enqueue(store, g, { sendAt: Date.now() + 300 });
    const stop = new AbortController();
    const worker = new Worker(store, [g], { pollMs: 50 }).run(stop.signal);
    try {
      const deadline = Date.now() + 10_000;
      while ((await store.getRun(runId))?.status !== 'succeeded') {
        if (Date.now() > deadline) throw new Error('the node never ran');
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    } finally {
      stop.abort();
      await worker;
    }
    expect(bodies.send).toBe(1);
  });
});

describe('declaring notBefore', () => {
  it('is part of the structural hash, and refused on a node with no body to start later', () => {
    const plain = graph('g', { state: State })
      .node('send', () => ({}))
      .edge('send', END)
      .entry('send')
      .compile();
    expect(scheduled({ send: 0 }).hash).not.toBe(plain.hash);
    const onPerson = () =>
      graph('g', { state: State })
        .node('ask', person({ prompt: 'ok?', answer: z.object({ ok: z.boolean() }) }), {
          notBefore: () => 0,
        })
        .edge('ask', END)
        .entry('ask')
        .compile();
    try {
      onPerson();
      expect.unreachable();
    } catch (error) {
      expect(isWaymarkError(error) && error.code).toBe('GRAPH_INVALID');
      expect(JSON.stringify((error as { details: unknown }).details)).toContain('notBefore');
    }
  });
});
