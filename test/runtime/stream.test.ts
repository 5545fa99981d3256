import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  all,
  answer,
  append,
  graph,
  isWaymarkError,
  person,
  resume,
  run,
  type StreamEvent,
  watch,
} from '../../src/index.js';
import { stores } from '../support/stores.js';

// A run's stream: the events its commits tell, the same in process (the `watch` option) and
// read back from the store (`watch()`), addressable by offset, across a wait and a resume.

const State = z.object({
  topics: z.array(z.string()).default([]),
  notes: z.array(z.string()).default([]),
  approved: z.boolean().default(false),
});

function triage(flaky: { failures: number }) {
  return graph('stream-triage', { state: State, reducers: { notes: append } })
    .node('plan', (_s, ctx) => {
      ctx.emit('progress', { step: 'planning' });
      return { topics: ['a', 'b', 'c'] };
    })
    .node(
      'research',
      (_s, ctx) => {
        if (ctx.item === 'b' && flaky.failures-- > 0) throw new Error('a flaky source');
        ctx.emit('found', { topic: ctx.item });
        return { notes: [`on ${ctx.item}`] };
      },
      { writes: ['notes'], retry: { attempts: 2, backoffMs: 0 } },
    )
    .node('merge', () => ({}), { join: all() })
    .node(
      'approve',
      person({ prompt: () => 'Publish?', answer: z.object({ approved: z.boolean() }) }),
    )
    .node('publish', () => ({}), { terminal: true })
    .map('plan', { over: 'topics', branch: 'research', join: 'merge' })
    .edge('research', 'merge')
    .edge('merge', 'approve')
    .edge('approve', 'publish')
    .entry('plan')
    .compile();
}

/** Reads a store's stream to its end (or to what is recorded, with follow: false). */
async function read(
  iterable: AsyncIterable<StreamEvent>,
  stopAt?: (e: StreamEvent) => boolean,
): Promise<StreamEvent[]> {
  const out: StreamEvent[] = [];
  for await (const event of iterable) {
    out.push(event);
    if (stopAt?.(event)) break;
  }
  return out;
}

describe.each(stores)('a run stream, with the %s store', (_name, makeStore) => {
  it('in process and from the store it is one stream: the same events with the same offsets, across a wait and a resume', async () => {
    const store = makeStore();
    const g = triage({ failures: 1 });
    const live: StreamEvent[] = [];
    const first = await run(g, {}, { store, runId: 'r1', watch: (e) => live.push(e) });
    expect(first.status).toBe('waiting');
    await answer(store, 'r1', 'r1/approve:1', { approved: true }, { by: 'ana' });
    const done = await resume(store, g, 'r1', { watch: (e) => live.push(e) });
    expect(done.status).toBe('succeeded');

    const stored = await read(watch(store, g, 'r1'));
    expect(stored).toEqual(live);
    const types = stored.map((e) => e.type);
    expect(types[0]).toBe('run');
    expect(stored.at(-1)).toMatchObject({ type: 'run', status: 'succeeded', cause: 'status' });
    expect(types).toContain('join.released');
    expect(
      stored.filter((e) => e.type === 'custom').map((e) => e.type === 'custom' && e.name),
    ).toEqual(['progress', 'found', 'found', 'found']);
    // The flaky branch failed once, was scheduled again, and completed.
    const failed = stored.find((e) => e.type === 'activation.failed');
    expect(failed).toMatchObject({ node: 'research', attempt: 1, retrying: true });
    expect(
      stored.filter(
        (e) => e.type === 'activation.scheduled' && e.activation === failed?.activation,
      ),
    ).toHaveLength(2);
    const opened = stored.find((e) => e.type === 'wait.opened');
    expect(opened).toMatchObject({ requestId: 'r1/approve:1', prompt: 'Publish?' });
    const answered = stored.find((e) => e.type === 'wait.answered');
    expect(answered).toMatchObject({ answer: { approved: true } });
    // Offsets are strictly increasing: the stream's order is the history's.
    const offsets = stored.map((e) => e.offset);
    expect(new Set(offsets).size).toBe(offsets.length);
  });

  it('a watcher that resumes after any offset gets exactly what came after it', async () => {
    const store = makeStore();
    const g = triage({ failures: 0 });
    await run(g, {}, { store, runId: 'r1' });
    await answer(store, 'r1', 'r1/approve:1', { approved: true }, { by: 'ana' });
    await resume(store, g, 'r1');
    const whole = await read(watch(store, g, 'r1'));
    for (let i = 0; i < whole.length; i++) {
      const rest = await read(watch(store, g, 'r1', { after: whole[i]!.offset }));
      expect(rest).toEqual(whole.slice(i + 1));
    }
    // A bare seq means the whole of that commit was seen.
    const seq = whole[3]!.seq;
    expect(await read(watch(store, g, 'r1', { after: String(seq) }))).toEqual(
      whole.filter((e) => e.seq > seq),
    );
  });

  it('follows a waiting run live: what the resume commits reaches the watcher, which ends with the run', async () => {
    const store = makeStore();
    const g = triage({ failures: 0 });
    await run(g, {}, { store, runId: 'r1' });
    const following = read(watch(store, g, 'r1', { pollMs: 5 }));
    await new Promise((resolve) => setTimeout(resolve, 30));
    await answer(store, 'r1', 'r1/approve:1', { approved: true }, { by: 'ana' });
    await resume(store, g, 'r1');
    const events = await following;
    expect(events.at(-1)).toMatchObject({ type: 'run', status: 'succeeded' });
    expect(events).toEqual(await read(watch(store, g, 'r1')));
  });

  it('with states, a completion carries the state after it; follow: false stops at what is recorded', async () => {
    const store = makeStore();
    const g = triage({ failures: 0 });
    await run(g, {}, { store, runId: 'r1' });
    const now = await read(watch(store, g, 'r1', { follow: false, states: true }));
    expect(now.at(-1)).toMatchObject({ type: 'run', status: 'waiting' });
    const merged = now.filter((e) => e.type === 'activation.completed' && e.node === 'merge');
    expect(merged).toMatchObject([{ state: { notes: ['on a', 'on b', 'on c'] } }]);
  });

  it('refuses an offset that is not one, and a run that does not exist, with their codes', async () => {
    const store = makeStore();
    const g = triage({ failures: 0 });
    await run(g, {}, { store, runId: 'r1' });
    const codeOf = (p: Promise<unknown>) =>
      p.then(
        () => 'resolved',
        (e: unknown) => (isWaymarkError(e) ? e.code : String(e)),
      );
    expect(await codeOf(read(watch(store, g, 'r1', { after: 'yesterday' })))).toBe(
      'OPTIONS_INVALID',
    );
    expect(await codeOf(read(watch(store, g, 'nope')))).toBe('RUN_NOT_FOUND');
  });
});
