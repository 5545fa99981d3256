import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { answer, END, graph, isWaymarkError, person, resume, run } from '../../src/index.js';
import { fakeClock } from '../support/clock.js';
import { dyingAt, stores } from '../support/stores.js';

// Time is data: the run deadline, retry backoff and wait timeouts are absolute times in the
// snapshot or in timer rows, so whoever drives the run next finds what is due. Every timer goes
// through the injected clock: nothing here sleeps for real.

const State = z.object({ log: z.array(z.string()).default([]), n: z.number().default(0) });

const code = (p: Promise<unknown>) =>
  p.then(
    () => 'resolved',
    (e: unknown) => (isWaymarkError(e) ? e.code : String(e)),
  );

describe.each(stores)('time is data, with the %s store', (_name, makeStore) => {
  /** first -> second (which waits on the clock for `ms`) -> third. */
  const slow = (ms: number, clock: ReturnType<typeof fakeClock>) =>
    graph('slow', { state: State })
      .node('first', () => ({ n: 1 }))
      .node('second', async (_s, ctx) => {
        await clock.sleep(ms, ctx.signal);
        return { n: 2 };
      })
      .node('third', () => ({ n: 3 }))
      .edge('first', 'second')
      .edge('second', 'third')
      .edge('third', END)
      .entry('first')
      .compile();

  it('keeps the deadline across a resume: an interrupted run times out when its first deadline passes', async () => {
    const store = makeStore();
    const clock = fakeClock(1_000);
    const g = slow(5_000, clock);
    // Started at 1,000 with 3,000 ms: due at 4,000. Its process dies after first's commit.
    const dying = run(
      g,
      {},
      { store: dyingAt(store, 3), runId: 'r', clock, timeoutMs: 3_000 },
    ).catch(String);
    await clock.advance(5_000); // second ends at 6,000, its commit fails: the process is gone
    expect(await dying).toContain('the process died');
    expect((await store.listTimers('r')).find((t) => t.id === 'deadline')?.at).toBe(4_000);

    // Resumed later: the deadline it started with has passed, so the run times out now instead of
    // starting a new 3-second limit.
    const resumed = await resume(store, g, 'r', { clock });

    expect(resumed.status).toBe('timed_out');
    expect(resumed.status === 'timed_out' && resumed.error.message).toBe(
      'the run passed its time limit of 3000 ms',
    );
  });

  it('a resume before the deadline keeps counting toward it, on the injected clock', async () => {
    const store = makeStore();
    const clock = fakeClock(1_000);
    const g = slow(2_000, clock);
    const dying = run(
      g,
      {},
      { store: dyingAt(store, 3), runId: 'r', clock, timeoutMs: 10_000 },
    ).catch(String);
    await clock.advance(2_000);
    expect(await dying).toContain('the process died');

    // At 3,000 the run has 8,000 ms left, not 10,000; second takes 2,000 and third nothing.
    const resumed = resume(store, g, 'r', { clock });
    await clock.advance(2_000);
    expect((await resumed).status).toBe('succeeded');
    // The deadline timer goes with the run's end.
    expect(await store.listTimers('r')).toEqual([]);

    const stuck = graph('stuck', { state: State })
      .node('spin', async (_s, ctx) => {
        await clock.sleep(60_000, ctx.signal);
        return {};
      })
      .edge('spin', END)
      .entry('spin')
      .compile();
    const timing = run(stuck, {}, { store, runId: 's', clock, timeoutMs: 5_000 });
    await clock.advance(5_000);
    expect((await timing).status).toBe('timed_out');
  });

  it('a timed-out run resumes only with a new time limit, which replaces the old deadline', async () => {
    const store = makeStore();
    const clock = fakeClock(1_000);
    const g = slow(5_000, clock);
    const timing = run(g, {}, { store, runId: 'r', clock, timeoutMs: 1_000 });
    await clock.advance(1_000);
    expect((await timing).status).toBe('timed_out');

    const refused = await resume(store, g, 'r', { clock }).catch((e: unknown) => e);
    expect(refused).toMatchObject({
      code: 'RUN_NOT_RESUMABLE',
      message: expect.stringContaining('resume it with a new time limit'),
    });

    const again = resume(store, g, 'r', { clock, timeoutMs: 10_000 });
    await clock.advance(5_000);
    const done = await again;
    expect(done.status).toBe('succeeded');
    expect(done.state.n).toBe(3);
  });

  it('a retry waits out its backoff on the clock, and the backoff is a time in the checkpoint', async () => {
    const store = makeStore();
    const clock = fakeClock(1_000);
    let calls = 0;
    const g = graph('flaky', { state: State })
      .node(
        'fetch',
        () => {
          calls++;
          if (calls === 1) throw new Error('503');
          return { n: 1 };
        },
        { retry: { attempts: 2, backoffMs: 60_000 } },
      )
      .edge('fetch', END)
      .entry('fetch')
      .compile();

    const running = run(g, {}, { store, runId: 'r', clock });
    await clock.advance(59_999);
    expect(calls).toBe(1);
    const loaded = await store.loadRun('r');
    const last = loaded?.events.at(-1);
    expect(JSON.parse(last!.event)).toMatchObject({ type: 'failed', attempt: 1, at: 1_000 });

    await clock.advance(1);
    expect((await running).status).toBe('succeeded');
    expect(calls).toBe(2);
  });

  it("a wait's timeout is a timer the store lists, due when the wait would time out", async () => {
    const store = makeStore();
    const clock = fakeClock(1_000);
    const g = graph('approval', { state: State })
      .node(
        'approve',
        person({
          prompt: 'ok?',
          answer: z.object({ ok: z.boolean() }),
          update: () => ({ n: 1 }),
          timeoutMs: 60_000,
        }),
        { onError: 'give-up' },
      )
      .node('give-up', () => ({ log: ['gave up'] }), { terminal: true })
      .edge('approve', END)
      .entry('approve')
      .compile();
    await run(g, {}, { store, runId: 'r', clock });
    await run(g, {}, { store, runId: 'r2', clock });

    expect(await store.listTimers('r')).toEqual([
      { runId: 'r', id: 'wait:r/approve:1', at: 61_000 },
    ]);
    expect(await store.dueTimers(60_999)).toEqual([]);
    expect((await store.dueTimers(61_000)).map((t) => t.runId).sort()).toEqual(['r', 'r2']);

    // Answered in time: the timer goes with the wait.
    await answer(store, 'r', 'r/approve:1', { ok: true }, { by: 'ana', clock });
    expect((await resume(store, g, 'r', { clock })).status).toBe('succeeded');
    expect(await store.listTimers('r')).toEqual([]);

    // Not answered: the resume after the timer is due resolves it as a timeout.
    await clock.advance(60_001);
    const late = await resume(store, g, 'r2', { clock });
    expect(late.status).toBe('succeeded');
    expect(late.state.log).toEqual(['gave up']);
    expect(late.errors.map((e) => e.code)).toEqual(['WAIT_TIMED_OUT']);
    expect(await store.listTimers('r2')).toEqual([]);
  });

  it('a waiting run past its deadline times out at its next resume', async () => {
    const store = makeStore();
    const clock = fakeClock(1_000);
    const g = graph('approval', { state: State })
      .node(
        'approve',
        person({ prompt: 'ok?', answer: z.object({ ok: z.boolean() }), update: () => ({}) }),
      )
      .edge('approve', END)
      .entry('approve')
      .compile();
    const waiting = await run(g, {}, { store, runId: 'r', clock, timeoutMs: 5_000 });
    expect(waiting.status).toBe('waiting');
    await answer(store, 'r', 'r/approve:1', { ok: true }, { by: 'ana', clock });

    await clock.advance(5_000);
    expect(await code(resume(store, g, 'r', { clock }).then((r) => r.status))).toBe('resolved');
    expect((await store.getRun('r'))?.status).toBe('timed_out');
  });
});
