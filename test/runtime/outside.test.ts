import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  answer,
  cancel,
  END,
  graph,
  inspect,
  isWaymarkError,
  loadTrace,
  person,
  resume,
  rewind,
  run,
} from '../../src/index.js';
import { stores } from '../support/stores.js';

// What a second process (the CLI, an operator's script) can do to a stored run it did not start:
// read it, cancel it, and find out what started it.

const State = z.object({
  steps: z.array(z.string()).default([]),
  approved: z.boolean().default(false),
  notes: z.array(z.string()).default([]),
});

function pipeline(failing: { at?: string } = {}) {
  const mark = (name: string) => (s: z.infer<typeof State>) => {
    if (failing.at === name) throw new Error(`${name} is down`);
    return { steps: [...s.steps, name] };
  };
  return graph('outside', { state: State })
    .node('fetch', mark('fetch'))
    .node('draft', mark('draft'))
    .node('approve', person({ prompt: 'ship it?', answer: z.object({ approved: z.boolean() }) }))
    .node('publish', mark('publish'))
    .edge('fetch', 'draft')
    .edge('draft', 'approve')
    .edge('approve', 'publish')
    .edge('publish', END)
    .entry('fetch')
    .compile();
}

const code = (p: Promise<unknown>) =>
  p.then(
    () => 'resolved',
    (e: unknown) => (isWaymarkError(e) ? e.code : String(e)),
  );

describe.each(stores)('a stored run seen from outside, with the %s store', (_name, makeStore) => {
  it('inspect reads the current checkpoint, waits and whole trace, and writes nothing', async () => {
    const store = makeStore();
    const g = pipeline();
    await run(g, {}, { store, runId: 'r' });
    const seq = (await store.getRun('r'))?.seq;

    const view = await inspect(store, g, 'r');

    expect(view.snapshot.status).toBe('waiting');
    expect(view.snapshot.state.steps).toEqual(['fetch', 'draft']);
    expect(view.snapshot.pending.map((a) => a.id)).toEqual(['approve:1']);
    expect(view.waits.map((w) => [w.requestId, w.answer])).toEqual([['r/approve:1', null]]);
    expect(view.trace.path).toEqual(['fetch', 'draft']);
    expect((await store.getRun('r'))?.seq).toBe(seq);
    expect(await code(inspect(store, g, 'nope'))).toBe('RUN_NOT_FOUND');
  });

  it('cancel stops a waiting run for good: resume refuses it, and a second cancel is refused', async () => {
    const store = makeStore();
    const g = pipeline();
    await run(g, {}, { store, runId: 'r' });

    const after = await cancel(store, g, 'r', { reason: 'the release was pulled' });

    expect(after.status).toBe('cancelled');
    expect((await store.getRun('r'))?.status).toBe('cancelled');
    expect(JSON.parse((await store.getRun('r'))?.error ?? 'null')).toMatchObject({
      code: 'RUN_CANCELLED',
      message: 'the run was cancelled: the release was pulled',
    });
    expect(await code(resume(store, g, 'r'))).toBe('RUN_NOT_RESUMABLE');
    expect(await code(cancel(store, g, 'r'))).toBe('RUN_NOT_CANCELLABLE');
    // Its open wait can no longer be answered: nothing is recorded.
    const answered = answer(store, 'r', 'r/approve:1', { approved: true }, { by: 'ed' });
    expect(await code(answered)).toBe('RUN_NOT_RESUMABLE');
    expect((await store.listWaits('r'))[0]?.answer).toBeNull();
  });

  it('cancel stops a failed run, which a resume would otherwise retry', async () => {
    const store = makeStore();
    const first = await run(pipeline({ at: 'draft' }), {}, { store, runId: 'r' });
    expect(first.status).toBe('failed');

    await cancel(store, pipeline(), 'r');

    expect((await inspect(store, pipeline(), 'r')).snapshot.status).toBe('cancelled');
    expect(await code(resume(store, pipeline(), 'r'))).toBe('RUN_NOT_RESUMABLE');
  });

  it('a succeeded run cannot be cancelled, and an unknown one is not found; nothing is written', async () => {
    const store = makeStore();
    const g = pipeline();
    await run(g, {}, { store, runId: 'r' });
    await answer(store, 'r', 'r/approve:1', { approved: true }, { by: 'ed' });
    expect((await resume(store, g, 'r')).status).toBe('succeeded');
    const seq = (await store.getRun('r'))?.seq;

    expect(await code(cancel(store, g, 'r'))).toBe('RUN_NOT_CANCELLABLE');
    expect(await code(cancel(store, g, 'nope'))).toBe('RUN_NOT_FOUND');
    expect((await store.getRun('r'))?.seq).toBe(seq);
  });

  it('a process still executing a run that was cancelled elsewhere folds the cancellation in at its next commit and stops', async () => {
    const store = makeStore();
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let begin!: () => void;
    const begun = new Promise<void>((resolve) => {
      begin = resolve;
    });
    const slow = graph('outside', { state: State })
      .node('fetch', async () => {
        begin();
        await gate;
        return { steps: ['fetch'] };
      })
      .node('draft', (s) => ({ steps: [...s.steps, 'draft'] }))
      .edge('fetch', 'draft')
      .edge('draft', END)
      .entry('fetch')
      .compile();
    const running = run(slow, {}, { store, runId: 'r' });
    await begun; // the run is recorded and its first node is in flight
    await cancel(store, slow, 'r');
    release();

    const stopped = await running;
    expect(stopped.status).toBe('cancelled');
    expect(stopped.trace.path).toEqual([]); // fetch's late completion changed nothing; draft never ran
    expect((await store.getRun('r'))?.status).toBe('cancelled');
    expect((await loadTrace(store, 'r')).path).toEqual([]);
  });

  it('labels given at start are kept on the run, and a rewind carries them on', async () => {
    const store = makeStore();
    const g = pipeline();
    await run(g, {}, { store, runId: 'r', labels: { graphFile: '/work/graph.ts' } });
    expect(JSON.parse((await store.getRun('r'))?.labels ?? 'null')).toEqual({
      graphFile: '/work/graph.ts',
    });

    await rewind(store, g, 'r', { to: 'draft', runId: 'r2', update: { notes: ['shorter'] } });

    expect(JSON.parse((await store.getRun('r2'))?.labels ?? 'null')).toEqual({
      graphFile: '/work/graph.ts',
    });
  });

  it('refuses labels that are not strings, before anything is written', async () => {
    const store = makeStore();
    const labels = { graphFile: 42 } as unknown as Record<string, string>;
    expect(await code(run(pipeline(), {}, { store, runId: 'r', labels }))).toBe('OPTIONS_INVALID');
    expect(await store.getRun('r')).toBeUndefined();
  });

  it('onAttemptStart sees each attempt begin, before its trace entry ends it', async () => {
    const events: string[] = [];
    await run(
      pipeline(),
      {},
      {
        onAttemptStart: (a) => events.push(`start ${a.activation}#${a.attempt}`),
        onTraceEntry: (e) => events.push(`end ${e.activation}#${e.attempt}`),
      },
    );
    expect(events).toEqual([
      'start fetch:1#1',
      'end fetch:1#1',
      'start draft:1#1',
      'end draft:1#1',
    ]);
  });
});
