import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { answer, END, graph, isWaymarkError, person, resume, run } from '../../src/index.js';
import { fakeClock } from '../support/clock.js';
import { stores } from '../support/stores.js';

// A wait's deadline is a route in the graph: unanswered `timeoutMs` after it opened, the wait is
// closed by whoever drives the run next and the person node fails with WAIT_TIMED_OUT, which
// its onError route takes (escalation). An answer after the deadline is refused, recorded
// nowhere, whether or not the wait was closed yet.

const State = z.object({
  approved: z.boolean().default(false),
  escalated: z.boolean().default(false),
});

const approval = graph('approval', { state: State })
  .node(
    'approve',
    person({ prompt: 'ok?', answer: z.object({ approved: z.boolean() }), timeoutMs: 60_000 }),
    { onError: 'escalate' },
  )
  .node('escalate', () => ({ escalated: true }), { terminal: true })
  .edge('approve', END)
  .entry('approve')
  .compile();

const code = (p: Promise<unknown>) =>
  p.then(
    () => 'resolved',
    (e: unknown) => (isWaymarkError(e) ? e.code : String(e)),
  );

describe.each(stores)('deadlines on waits, with the %s store', (_name, makeStore) => {
  it('past its timeout the wait is closed, the run routes on WAIT_TIMED_OUT, and a late answer is refused', async () => {
    const store = makeStore();
    const clock = fakeClock(1_000);
    await run(approval, {}, { store, runId: 'r', clock });

    await clock.advance(60_000);
    const escalated = await resume(store, approval, 'r', { clock });

    expect(escalated.status).toBe('succeeded');
    expect(escalated.state.escalated).toBe(true);
    expect(escalated.errors.map((e) => [e.code, e.class])).toEqual([['WAIT_TIMED_OUT', 'timeout']]);
    expect(await store.listWaits('r', { open: true })).toEqual([]);
    expect((await store.listWaits('r'))[0]?.closedAt).toBe(61_000);
    expect(
      await code(answer(store, 'r', 'r/approve:1', { approved: true }, { by: 'late', clock })),
    ).toBe('WAIT_EXPIRED');
    expect((await store.listWaits('r'))[0]?.answer).toBeNull();
  });

  it('an answer after the deadline is refused even before anything closed the wait', async () => {
    const store = makeStore();
    const clock = fakeClock(1_000);
    await run(approval, {}, { store, runId: 'r', clock });
    await clock.advance(60_000);

    expect(
      await code(answer(store, 'r', 'r/approve:1', { approved: true }, { by: 'late', clock })),
    ).toBe('WAIT_EXPIRED');
    expect((await resume(store, approval, 'r', { clock })).state.escalated).toBe(true);
  });

  it('deadline: a time from the state closes the wait then, the earlier of it and timeoutMs', async () => {
    const store = makeStore();
    const clock = fakeClock(1_000);
    const Due = z.object({ dueAt: z.number(), escalated: z.boolean().default(false) });
    const dated = graph('dated', { state: Due })
      .node(
        'approve',
        person({
          prompt: 'ok?',
          answer: z.object({ ok: z.boolean() }),
          update: () => ({}),
          deadline: (s) => new Date(s.dueAt),
          timeoutMs: 60_000,
        }),
        { onError: 'escalate' },
      )
      .node('escalate', () => ({ escalated: true }), { terminal: true })
      .edge('approve', END)
      .entry('approve')
      .compile();
    await run(dated, { dueAt: 11_000 }, { store, runId: 'r', clock });
    expect(await store.listTimers('r')).toEqual([
      { runId: 'r', id: 'wait:r/approve:1', at: 11_000 },
    ]);

    await clock.advance(10_000);
    const late = await resume(store, dated, 'r', { clock });
    expect(late.state.escalated).toBe(true);
    expect(late.errors[0]?.message).toContain('by its deadline, 1970-01-01T00:00:11.000Z');
    expect(await code(answer(store, 'r', 'r/approve:1', { ok: true }, { by: 'late', clock }))).toBe(
      'WAIT_EXPIRED',
    );
  });

  it('an answer in time is applied, and its deadline goes with it', async () => {
    const store = makeStore();
    const clock = fakeClock(1_000);
    await run(approval, {}, { store, runId: 'r', clock });
    await clock.advance(59_999);
    await answer(store, 'r', 'r/approve:1', { approved: true }, { by: 'ana', clock });
    await clock.advance(10_000);

    const done = await resume(store, approval, 'r', { clock });
    expect(done.state).toMatchObject({ approved: true, escalated: false });
    expect(await store.listTimers('r')).toEqual([]);
  });
});
