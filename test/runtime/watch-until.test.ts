import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { answer, graph, person, resume, run, type StreamEvent, watch } from '../../src/index.js';
import { stores } from '../support/stores.js';

// `watch(..., { until: 'stop' })`: a reader that stops where the run stops (it waits, or it has
// ended), then reads on after its last offset once the wait is answered. The default follows
// the run across its waits to its end.

const approval = graph('watch-until', {
  state: z.object({ title: z.string(), approved: z.boolean().default(false) }),
})
  .node('draft', () => ({}))
  .node(
    'ask',
    person({ prompt: (s) => `Ship ${s.title}?`, answer: z.object({ approved: z.boolean() }) }),
  )
  .node('ship', () => ({}), { terminal: true })
  .edge('draft', 'ask')
  .edge('ask', 'ship')
  .entry('draft')
  .compile();

async function collect(events: AsyncIterable<StreamEvent>): Promise<StreamEvent[]> {
  const out: StreamEvent[] = [];
  for await (const e of events) out.push(e);
  return out;
}

describe.each(stores)('watch until (%s)', (_name, makeStore) => {
  it('a reader of a waiting run stops at its wait, and after the answer reads on to its end', async () => {
    const store = makeStore();
    const { status } = await run(approval, { title: 'v1' }, { store, runId: 'u1' });
    expect(status).toBe('waiting');

    const first = await collect(watch(store, approval, 'u1', { until: 'stop' }));
    expect(first.filter((e) => e.type === 'run').at(-1)).toMatchObject({ status: 'waiting' });
    expect(first.map((e) => e.type)).toContain('wait.opened');
    const last = first.at(-1)!.offset;
    expect(await collect(watch(store, approval, 'u1', { until: 'stop', after: last }))).toEqual([]);

    // The default follows across the wait: it is still reading when the answer comes.
    const following = collect(watch(store, approval, 'u1', { pollMs: 5 }));
    await answer(store, 'u1', 'u1/ask:1', { approved: true }, { by: 'ana' });
    await resume(store, approval, 'u1');
    const whole = await following;
    expect(whole.at(-1)).toMatchObject({ type: 'run', status: 'succeeded' });

    const rest = await collect(watch(store, approval, 'u1', { until: 'stop', after: last }));
    expect(rest.at(-1)).toMatchObject({ type: 'run', status: 'succeeded' });
    expect([...first, ...rest]).toEqual(whole);
    await store.close();
  });
});
