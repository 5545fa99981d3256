import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  all,
  answer,
  append,
  graph,
  history,
  inspect,
  isWaymarkError,
  patchState,
  permanentError,
  person,
  resume,
  run,
  type StreamEvent,
  watch,
} from '../../src/index.js';
import { stores } from '../support/stores.js';

// patchState(): an operator changes the state of a run that waits or stopped, before it goes
// on: a recorded, validated step naming who and why, never an edit of history.

const State = z.object({
  severity: z.enum(['low', 'high']).default('low'),
  notes: z.array(z.string()).default([]),
  approved: z.boolean().default(false),
  sent: z.string().default(''),
});

const triage = graph('patch-triage', { state: State, reducers: { notes: append } })
  .node('classify', () => ({ notes: ['classified'] }))
  .node(
    'approve',
    person({
      prompt: (s) => `Send as ${s.severity}?`,
      answer: z.object({ approved: z.boolean() }),
    }),
  )
  .node(
    'send',
    (s) => {
      if (s.severity !== 'high')
        throw permanentError('NODE_FAILED', 'only high-severity issues are sent');
      return { sent: `sent (${s.notes.join(', ')})` };
    },
    { terminal: true },
  )
  .edge('classify', 'approve')
  .edge('approve', 'send')
  .entry('classify')
  .compile();

const codeOf = (p: Promise<unknown>) =>
  p.then(
    () => 'resolved',
    (e: unknown) => (isWaymarkError(e) ? e.code : String(e)),
  );

async function read(iterable: AsyncIterable<StreamEvent>): Promise<StreamEvent[]> {
  const out: StreamEvent[] = [];
  for await (const e of iterable) out.push(e);
  return out;
}

describe.each(stores)("patching a run's state, with the %s store", (_name, makeStore) => {
  it('a waiting run patched, then answered, goes on from the patched state; the patch is a step of its history', async () => {
    const store = makeStore();
    await run(triage, {}, { store, runId: 'r1' });
    const after = await patchState(
      store,
      triage,
      'r1',
      { severity: 'high', notes: ['escalated'] },
      {
        by: 'ana',
        reason: 'customer escalation',
      },
    );
    expect(after.status).toBe('waiting');
    expect(after.state).toMatchObject({ severity: 'high', notes: ['classified', 'escalated'] });
    await answer(store, 'r1', 'r1/approve:1', { approved: true }, { by: 'ed' });
    const done = await resume(store, triage, 'r1');
    expect(done.status).toBe('succeeded');
    expect(done.state.sent).toBe('sent (classified, escalated)');
    // Replayed from the history like any step: the stored run says the same.
    expect((await inspect(store, triage, 'r1')).snapshot.state).toEqual(done.state);
    const steps = (await history(store, triage, 'r1')).steps;
    expect(steps.find((s) => s.event === 'patched')).toMatchObject({
      status: 'waiting',
      state: { severity: 'high' },
    });
    const events = await read(watch(store, triage, 'r1', { follow: false }));
    expect(events.find((e) => e.type === 'state.patched')).toMatchObject({
      by: 'ana',
      reason: 'customer escalation',
      update: { severity: 'high', notes: ['escalated'] },
    });
  });

  it('a failed run patched, then resumed, runs again from where it failed with the patched state', async () => {
    const store = makeStore();
    await run(triage, {}, { store, runId: 'r1' });
    await answer(store, 'r1', 'r1/approve:1', { approved: true }, { by: 'ed' });
    expect((await resume(store, triage, 'r1')).status).toBe('failed');
    await patchState(
      store,
      triage,
      'r1',
      { severity: 'high' },
      { by: 'ana', reason: 'it is urgent' },
    );
    const done = await resume(store, triage, 'r1');
    expect(done.status).toBe('succeeded');
    expect(done.trace.entries.filter((e) => e.node === 'classify')).toHaveLength(0);
  });

  it('refuses what it cannot do, recording nothing: a finished run, an open fan-out, bad fields, no reason', async () => {
    const store = makeStore();
    await run(triage, {}, { store, runId: 'r1' });
    const seq = async () => (await store.getRun('r1'))?.seq;
    const before = await seq();
    expect(
      await codeOf(
        patchState(store, triage, 'r1', { severity: 'urgent' as never }, { by: 'a', reason: 'b' }),
      ),
    ).toBe('OPTIONS_INVALID');
    expect(
      await codeOf(patchState(store, triage, 'r1', { mood: 1 } as never, { by: 'a', reason: 'b' })),
    ).toBe('OPTIONS_INVALID');
    expect(
      await codeOf(patchState(store, triage, 'r1', { severity: 'high' }, { by: 'a', reason: ' ' })),
    ).toBe('OPTIONS_INVALID');
    // Found by test/fuzz/answers.fuzz.test.ts: an empty patch recorded who and why against nothing.
    expect(await codeOf(patchState(store, triage, 'r1', {}, { by: 'a', reason: 'b' }))).toBe(
      'OPTIONS_INVALID',
    );
    expect(await seq()).toBe(before);
    await answer(store, 'r1', 'r1/approve:1', { approved: true }, { by: 'ed' });
    await patchState(store, triage, 'r1', { severity: 'high' }, { by: 'a', reason: 'b' });
    await resume(store, triage, 'r1');
    expect(
      await codeOf(patchState(store, triage, 'r1', { severity: 'low' }, { by: 'a', reason: 'b' })),
    ).toBe('RUN_NOT_PATCHABLE');

    // A person waiting inside a branch: the branches see the state at their fan-out.
    const fan = graph('patch-fan', { state: State, reducers: { notes: append } })
      .node('split', () => ({}))
      .node('ask', person({ prompt: () => 'ok?', answer: z.object({ approved: z.boolean() }) }), {
        writes: ['approved'],
      })
      .node('other', () => ({ notes: ['other'] }), { writes: ['notes'] })
      .node('merge', () => ({}), { join: all(), terminal: true })
      .fanOut('split', ['ask', 'other'], 'merge')
      .edge('ask', 'merge')
      .edge('other', 'merge')
      .entry('split')
      .compile();
    expect((await run(fan, {}, { store, runId: 'f1' })).status).toBe('waiting');
    expect(
      await codeOf(patchState(store, fan, 'f1', { severity: 'high' }, { by: 'a', reason: 'b' })),
    ).toBe('RUN_NOT_PATCHABLE');
  });
});
