import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { all, cancel, END, graph, isWaymarkError, resume, run, sleep } from '../../src/index.js';
import { checkHistory } from '../../src/testing/index.js';
import { fakeClock } from '../support/clock.js';
import { dyingAt, stores } from '../support/stores.js';

// A sleep is durable: the run waits on a timer row, nothing is held for a long sleep, and
// whoever drives the run once the time has come wakes it. Every timer goes through the injected
// clock: nothing here sleeps for real.

const State = z.object({ n: z.number().default(0), sendAt: z.number().default(0) });

const day = 86_400_000;

/** first -> nap (the sleep given) -> last. */
const napping = (nap: ReturnType<typeof sleep<z.infer<typeof State>>>) =>
  graph('nap', { state: State })
    .node('first', () => ({ n: 1 }))
    .node('nap', nap)
    .node('last', (s) => ({ n: s.n + 1 }))
    .edge('first', 'nap')
    .edge('nap', 'last')
    .edge('last', END)
    .entry('first')
    .compile();

describe('declaring a sleep', () => {
  it('takes one of for (ms, or a number and a unit) or until, and refuses anything else with a code', () => {
    expect(() => sleep({ for: '2d' })).not.toThrow();
    expect(() => sleep({ for: 90_000 })).not.toThrow();
    expect(() => sleep({ until: () => new Date(0) })).not.toThrow();
    const code = (fn: () => unknown) => {
      try {
        fn();
        return 'none';
      } catch (e) {
        return isWaymarkError(e) ? e.code : String(e);
      }
    };
    expect(code(() => sleep({} as never))).toBe('DECLARATION_INVALID');
    expect(code(() => sleep({ for: '1s', until: () => 0 } as never))).toBe('DECLARATION_INVALID');
    expect(code(() => sleep({ for: 'two days' } as never))).toBe('DECLARATION_INVALID');
    expect(code(() => sleep({ until: 5 } as never))).toBe('DECLARATION_INVALID');
  });
});

describe.each(stores)('durable sleep, with the %s store', (_name, makeStore) => {
  it('a long sleep leaves the run waiting on a timer row, and a resume before it is due changes nothing', async () => {
    const store = makeStore();
    const clock = fakeClock(1_000);
    const g = napping(sleep({ for: '2d' }));

    const slept = await run(g, {}, { store, runId: 'r', clock });

    expect(slept.status).toBe('waiting');
    expect(slept.status === 'waiting' && slept.wakesAt).toBe(1_000 + 2 * day);
    expect(slept.state.n).toBe(1);
    expect(await store.listTimers('r')).toEqual([
      { runId: 'r', id: 'sleep:nap:1', at: 1_000 + 2 * day },
    ]);
    expect(await store.dueTimers(2 * day)).toEqual([]);
    expect((await store.dueTimers(1_000 + 2 * day)).map((t) => t.runId)).toEqual(['r']);

    await clock.advance(day);
    const seq = (await store.getRun('r'))?.seq;
    const early = await resume(store, g, 'r', { clock });
    expect(early.status).toBe('waiting');
    expect((await store.getRun('r'))?.seq).toBe(seq);

    await clock.advance(day);
    const woken = await resume(store, g, 'r', { clock });
    expect(woken.status).toBe('succeeded');
    expect(woken.state.n).toBe(2);
    expect(woken.trace.path).toEqual(['nap', 'last']);
    expect(await store.listTimers('r')).toEqual([]);
  });

  it('replays faithfully: the time a for-sleep took is an event, so a replay gives the same checkpoints', async () => {
    const store = makeStore();
    const clock = fakeClock(1_000);
    const g = napping(sleep({ for: '2d' }));
    await run(g, {}, { store, runId: 'asleep', clock });
    await run(g, {}, { store, runId: 'woken', clock });
    await clock.advance(2 * day);
    await resume(store, g, 'woken', { clock });

    const report = await checkHistory(store, { graphs: [g] });
    expect(report.violations).toEqual([]);
    expect(report.checked).toMatchObject({ runs: 2, replayed: 2 });
    const types = (await store.events('woken')).map(
      (e) => (JSON.parse(e.event) as { type: string }).type,
    );
    expect(types).toEqual(['started', 'completed', 'slept', 'completed', 'completed']);
  });

  it('a host that dies between the wake coming due and the next node starting: the next host wakes it, and the node runs once', async () => {
    const store = makeStore();
    const clock = fakeClock(1_000);
    const ran = { last: 0 };
    const g = graph('nap', { state: State })
      .node('first', () => ({ n: 1 }))
      .node('nap', sleep({ for: '2d' }))
      .node('last', (s) => {
        ran.last++;
        return { n: s.n + 1 };
      })
      .edge('first', 'nap')
      .edge('nap', 'last')
      .edge('last', END)
      .entry('first')
      .compile();
    await run(g, {}, { store, runId: 'r', clock });
    await clock.advance(2 * day);

    // The wake's commit is where this host dies: nothing of it is recorded, last never starts.
    const seq = (await store.getRun('r'))!.seq;
    const dying = await resume(dyingAt(store, seq + 1), g, 'r', { clock }).catch(String);
    expect(dying).toContain('the process died');
    expect(ran.last).toBe(0);
    expect((await store.listTimers('r')).map((t) => t.id)).toEqual(['sleep:nap:1']);

    // The next host finds the timer still due and wakes the run once.
    const woken = await resume(store, g, 'r', { clock });
    expect(woken.status).toBe('succeeded');
    expect(ran.last).toBe(1);
  });

  it('a sleep due within holdSleepsMs is slept through in process, on the clock', async () => {
    const store = makeStore();
    const clock = fakeClock(1_000);
    const g = napping(sleep({ for: '3s' }));

    const running = run(g, {}, { store, runId: 'r', clock });
    await clock.advance(2_999);
    expect((await store.getRun('r'))?.status).toBe('waiting');
    await clock.advance(1);
    const done = await running;

    expect(done.status).toBe('succeeded');
    expect(done.state.n).toBe(2);
    expect(await store.listTimers('r')).toEqual([]);

    // With holdSleepsMs: 0 even a short sleep is left to whoever hosts the run.
    const left = await run(g, {}, { store, runId: 'r2', clock, holdSleepsMs: 0 });
    expect(left.status).toBe('waiting');
    await expect(run(g, {}, { store, clock, holdSleepsMs: -1 })).rejects.toMatchObject({
      code: 'OPTIONS_INVALID',
    });
  });

  it('a resume shortly before a sleep is due sleeps through the rest of it', async () => {
    const store = makeStore();
    const clock = fakeClock(1_000);
    const g = napping(sleep({ for: '1m' }));
    expect((await run(g, {}, { store, runId: 'r', clock })).status).toBe('waiting');

    await clock.advance(58_000);
    const resumed = resume(store, g, 'r', { clock });
    await clock.advance(2_000);

    expect((await resumed).status).toBe('succeeded');
  });

  it('until: sleeps until the time the state says; a time already past wakes at once', async () => {
    const store = makeStore();
    const clock = fakeClock(1_000);
    const g = napping(sleep({ until: (s) => new Date(s.sendAt) }));

    const later = await run(g, { sendAt: 10 * day }, { store, runId: 'r', clock });
    expect(later.status === 'waiting' && later.wakesAt).toBe(10 * day);
    expect(await store.listTimers('r')).toEqual([{ runId: 'r', id: 'sleep:nap:1', at: 10 * day }]);

    const past = await run(g, { sendAt: 500 }, { store, runId: 'r2', clock });
    expect(past.status).toBe('succeeded');
    expect(past.state.n).toBe(2);
  });

  it('a cancelled run takes its sleep timer with it', async () => {
    const store = makeStore();
    const clock = fakeClock(1_000);
    const g = napping(sleep({ for: '2d' }));
    await run(g, {}, { store, runId: 'r', clock });

    await cancel(store, g, 'r', { clock });

    expect(await store.listTimers('r')).toEqual([]);
    expect(await store.dueTimers(Number.MAX_SAFE_INTEGER)).toEqual([]);
  });

  it('a sleep in one branch while another runs: the run waits once only the sleep is left', async () => {
    const store = makeStore();
    const clock = fakeClock(1_000);
    const g = graph('branches', { state: State })
      .node('split', () => ({}))
      .node('nap', sleep({ for: '1d' }))
      .node('work', () => ({ n: 1 }))
      .node('join', () => ({}), { join: all() })
      .fanOut('split', ['nap', 'work'], 'join')
      .edge('nap', 'join')
      .edge('work', 'join')
      .edge('join', END)
      .entry('split')
      .compile();

    const waiting = await run(g, {}, { store, runId: 'r', clock });
    expect(waiting.status).toBe('waiting');
    expect(waiting.state.n).toBe(0);
    expect((await store.listTimers('r')).map((t) => t.id)).toEqual(['sleep:split:1[0]/nap:1']);

    await clock.advance(day);
    const done = await resume(store, g, 'r', { clock });
    expect(done.status).toBe('succeeded');
    expect(done.state.n).toBe(1);
  });

  it('without a store, a run sleeps through every sleep: nothing else could wake it', async () => {
    const clock = fakeClock(1_000);
    const running = run(napping(sleep({ for: '1h' })), {}, { clock });
    await clock.advance(3_600_000);
    expect((await running).status).toBe('succeeded');
  });
});
