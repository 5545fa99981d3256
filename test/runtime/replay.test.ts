import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  END,
  type ErrorValue,
  graph,
  initialSnapshot,
  loadTrace,
  resume,
  run,
  type Snapshot,
  step,
} from '../../src/index.js';
import { dyingAt, stores } from '../support/stores.js';

describe.each(stores)('a replay is faithful, with the %s store', (_name, makeStore) => {
  // stamp -> check: check reads what stamp wrote. The run dies after stamp's commit landed, so
  // the resume replays stamp's completion from history before it runs check again.
  const dated = (schema: z.ZodType<Date>) => {
    const calls = { stamp: 0, check: [] as string[] };
    const g = graph('dated', {
      state: z.object({ at: schema.optional(), saw: z.string().default('') }),
    })
      .node('stamp', () => {
        calls.stamp++;
        return { at: new Date('2026-12-01T09:00:00.000Z') };
      })
      .node('check', (s) => {
        const kind = s.at instanceof Date ? `Date ${s.at.toISOString()}` : typeof s.at;
        calls.check.push(kind);
        return { saw: kind };
      })
      .edge('stamp', 'check')
      .edge('check', END)
      .entry('stamp')
      .compile();
    return { g, calls };
  };

  it('a z.date() field read back after a crash is the same Date: no UPDATE_INVALID, no node run twice', async () => {
    const store = makeStore();
    const { g, calls } = dated(z.date());
    // seq 1: started, seq 2: stamp completed, seq 3 (check completed) never lands.
    await expect(run(g, {}, { store: dyingAt(store, 3), runId: 'r' })).rejects.toThrow(
      'the process died',
    );

    const resumed = await resume(store, g, 'r');

    expect(resumed.status).toBe('succeeded');
    expect(resumed.errors).toEqual([]);
    expect(calls.stamp).toBe(1);
    expect(resumed.state.saw).toBe('Date 2026-12-01T09:00:00.000Z');
    expect(resumed.state.at).toEqual(new Date('2026-12-01T09:00:00.000Z'));
    expect((await loadTrace(store, 'r')).path).toEqual(['stamp', 'check']);
  });

  it('a z.coerce.date() field: a node after a resume reads a Date, as in an uninterrupted run', async () => {
    const store = makeStore();
    const { g, calls } = dated(z.coerce.date());
    const straight = await run(g, {});
    await expect(run(g, {}, { store: dyingAt(store, 3), runId: 'r' })).rejects.toThrow(
      'the process died',
    );

    const resumed = await resume(store, g, 'r');

    expect(straight.state.saw).toBe('Date 2026-12-01T09:00:00.000Z');
    expect(resumed.state.saw).toBe(straight.state.saw);
    expect(calls.check).toEqual([
      'Date 2026-12-01T09:00:00.000Z',
      'Date 2026-12-01T09:00:00.000Z',
      'Date 2026-12-01T09:00:00.000Z',
    ]);
  });

  it('records the update as parsed: defaults and transforms applied once, not again on replay', async () => {
    const store = makeStore();
    const State = z.object({
      words: z
        .string()
        .transform((text) => text.split(' ').length)
        .optional(),
      n: z.number().default(0),
    });
    const g = graph('parsed', { state: State })
      .node('count', () => ({ words: 'one two three' as unknown as number }))
      .node('after', (s) => ({ n: (s.words ?? 0) * 10 }))
      .edge('count', 'after')
      .edge('after', END)
      .entry('count')
      .compile();
    await expect(run(g, {}, { store: dyingAt(store, 3), runId: 'r' })).rejects.toThrow(
      'the process died',
    );

    const resumed = await resume(store, g, 'r');

    // Parsing 3 again would have failed (the transform wants a string): the event holds 3.
    expect(resumed.errors).toEqual([]);
    expect(resumed.state).toMatchObject({ words: 3, n: 30 });
  });
});

describe('events carry their attempt', () => {
  const State = z.object({ draft: z.string().default('') });
  const g = graph('attempts', { state: State })
    .node('plan', () => ({ draft: 'x' }), { retry: { attempts: 3 } })
    .edge('plan', END)
    .entry('plan')
    .compile();
  const timedOut: ErrorValue = {
    node: 'plan',
    activation: 'plan:1',
    attempt: 1,
    code: 'NODE_TIMEOUT',
    class: 'timeout',
    message: 'node "plan" did not finish within 20 ms',
  };

  it("a late completion of attempt 1, after attempt 2 started, is not booked as attempt 2's", () => {
    let s: Snapshot = initialSnapshot(g, 'r', { draft: '' }, { maxSteps: 10 });
    s = step(g, s, { type: 'started' }).snapshot;
    s = step(g, s, {
      type: 'failed',
      activation: 'plan:1',
      attempt: 1,
      error: timedOut,
      at: 1,
    }).snapshot;
    expect(s.pending).toMatchObject([{ id: 'plan:1', attempt: 2 }]);

    // What a worker whose lease expired sends: attempt 1's result, arriving late.
    const late = step(g, s, {
      type: 'completed',
      activation: 'plan:1',
      attempt: 1,
      update: { draft: 'late' },
    });

    expect(late.snapshot).toBe(s);
    expect(late.commands).toEqual([]);
    const current = step(g, s, {
      type: 'completed',
      activation: 'plan:1',
      attempt: 2,
      update: { draft: 'on time' },
    });
    expect(current.snapshot).toMatchObject({ status: 'succeeded', state: { draft: 'on time' } });
  });

  it("a late failure of attempt 1 does not use up attempt 2's retry budget", () => {
    let s: Snapshot = initialSnapshot(g, 'r', { draft: '' }, { maxSteps: 10 });
    s = step(g, s, { type: 'started' }).snapshot;
    s = step(g, s, {
      type: 'failed',
      activation: 'plan:1',
      attempt: 1,
      error: timedOut,
      at: 1,
    }).snapshot;
    const late = step(g, s, {
      type: 'failed',
      activation: 'plan:1',
      attempt: 1,
      error: timedOut,
      at: 2,
    });
    expect(late.snapshot).toBe(s);
    expect(s.pending).toMatchObject([{ attempt: 2 }]);
  });
});
