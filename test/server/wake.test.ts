import { expect, it } from 'vitest';
import { z } from 'zod';
import { END, graph, MemoryStore, person, run, type Store, sleep } from '../../src/index.js';
import { serve } from '../../src/server.js';

// A server hosts the runs of the graphs it serves: a run that sleeps is woken by it when its
// timer is due, with no process held meanwhile and no request needed; a wait past its deadline
// is closed by it, and the run goes on along its timeout route.

const State = z.object({ n: z.number().default(0) });

async function until(store: Store, runId: string, status: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while ((await store.getRun(runId))?.status !== status) {
    if (Date.now() > deadline) throw new Error(`run ${runId} never became ${status}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

it('a server wakes a sleeping run of its graphs once its timer is due, and the run goes on', async () => {
  const g = graph('nap', { state: State })
    .node('first', () => ({ n: 1 }))
    .node('nap', sleep({ for: '300ms' }))
    .node('last', (s) => ({ n: s.n + 1 }))
    .edge('first', 'nap')
    .edge('nap', 'last')
    .edge('last', END)
    .entry('first')
    .compile();
  const store = new MemoryStore();
  // Left waiting by the process that started it, which is gone as far as the run can tell.
  const slept = await run(g, {}, { store, runId: 'r', holdSleepsMs: 0 });
  expect(slept.status).toBe('waiting');

  const served = await serve({ store, graphs: [g], token: 't', wakePollMs: 50 });
  try {
    await until(store, 'r', 'succeeded');
  } finally {
    await served.close();
  }
  const events = (await store.events('r')).map(
    (e) => JSON.parse(e.event) as { type: string; activation?: string },
  );
  expect(events.filter((e) => e.type === 'completed' && e.activation === 'nap:1')).toHaveLength(1);
  expect(await store.listTimers('r')).toEqual([]);
});

it('a server closes a wait past its deadline, and the run escalates along its onError route', async () => {
  const Decision = z.object({ escalated: z.boolean().default(false) });
  const g = graph('deadline', { state: Decision })
    .node(
      'approve',
      person({
        prompt: 'ok?',
        answer: z.object({ ok: z.boolean() }),
        update: () => ({}),
        timeoutMs: 200,
      }),
      {
        onError: 'escalate',
      },
    )
    .node('escalate', () => ({ escalated: true }), { terminal: true })
    .edge('approve', END)
    .entry('approve')
    .compile();
  const store = new MemoryStore();
  expect((await run(g, {}, { store, runId: 'r' })).status).toBe('waiting');

  const served = await serve({ store, graphs: [g], token: 't', wakePollMs: 50 });
  try {
    await until(store, 'r', 'succeeded');
  } finally {
    await served.close();
  }
  expect(await store.listWaits('r', { open: true })).toEqual([]);
  const loaded = await store.loadRun('r');
  expect(JSON.parse(loaded!.snapshot.data).state).toEqual({ escalated: true });
});
