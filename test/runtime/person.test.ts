import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { answer, graph, isWaymarkError, loadTrace, person, resume, run } from '../../src/index.js';
import { manualClock } from '../support/clock.js';
import { dyingAt, stores } from '../support/stores.js';

const Post = z.object({
  title: z.string(),
  edits: z.number().default(0),
  approved: z.boolean().default(false),
  note: z.string().default(''),
  published: z.boolean().default(false),
});

const Approval = z.object({ approved: z.boolean(), note: z.string().default('') });

/** count -> approve (person) -> publish, or back to count on a rejection. */
function approvalGraph(calls: { count: number }, timeoutMs?: number) {
  return graph('approval', { state: Post })
    .node(
      'count',
      (s) => {
        calls.count++;
        return { edits: s.edits + 1 };
      },
      { visits: 3 },
    )
    .node(
      'approve',
      person({
        prompt: (s) => `Publish "${s.title}" (edit ${s.edits})?`,
        answer: Approval,
        ...(timeoutMs !== undefined && { timeoutMs }),
      }),
      { onError: 'give-up' },
    )
    .node('publish', () => ({ published: true }), { terminal: true })
    .node('give-up', (_s, ctx) => ({ note: `gave up: ${ctx.error?.code}` }), { terminal: true })
    .edge('count', 'approve')
    .route('approve', (s) => (s.approved ? 'publish' : 'count'), ['publish', 'count'])
    .entry('count')
    .compile();
}

const code = (p: Promise<unknown>) =>
  p.then(
    () => 'resolved',
    (e: unknown) => (isWaymarkError(e) ? e.code : String(e)),
  );

describe.each(stores)('a person stop point, with the %s store', (_name, makeStore) => {
  it('stops the run waiting, holding no process; after answer and resume nothing before it runs again', async () => {
    const store = makeStore();
    const calls = { count: 0 };
    const g = approvalGraph(calls);

    const first = await run(g, { title: 'Pricing changes' }, { store, runId: 'r' });

    expect(first.status).toBe('waiting');
    expect(calls.count).toBe(1);
    const [wait] = await store.listWaits('r', { open: true });
    expect(wait).toMatchObject({
      requestId: 'r/approve:1',
      node: 'approve',
      activation: 'approve:1',
    });
    expect(JSON.parse(wait!.request)).toMatchObject({
      prompt: 'Publish "Pricing changes" (edit 1)?',
    });
    expect((await store.getRun('r'))?.status).toBe('waiting');

    await answer(store, 'r', 'r/approve:1', { approved: true }, { by: 'editor' });
    const done = await resume(store, g, 'r');

    expect(done.status).toBe('succeeded');
    expect(calls.count).toBe(1);
    expect(done.state).toMatchObject({ edits: 1, approved: true, published: true });
    expect((await loadTrace(store, 'r')).path).toEqual(['count', 'approve', 'publish']);
  });

  it('a process that dies after the answer was applied resumes from history with the answer in it', async () => {
    const store = makeStore();
    let publishes = 0;
    const publishing = graph('approval', { state: Post })
      .node('count', (s) => ({ edits: s.edits + 1 }), { visits: 3 })
      .node('approve', person({ prompt: 'publish?', answer: Approval }))
      .node(
        'publish',
        () => {
          publishes++;
          return { published: true };
        },
        { terminal: true },
      )
      .edge('count', 'approve')
      .route('approve', (s) => (s.approved ? 'publish' : 'count'), ['publish', 'count'])
      .entry('count')
      .compile();
    await run(publishing, { title: 't' }, { store, runId: 'r' });
    await answer(store, 'r', 'r/approve:1', { approved: true }, { by: 'editor' });
    // The first resume applies the answer, then its process dies inside publish: nothing after
    // the answer's commit lands, so the answer is an event after the last snapshot, which the
    // next resume must read back.
    const seq = (await store.getRun('r'))!.seq;
    const died = await resume(dyingAt(store, seq + 2), publishing, 'r').catch(String);
    expect(died).toContain('the process died');

    const done = await resume(store, publishing, 'r');

    expect(done.status).toBe('succeeded');
    expect(done.state).toMatchObject({ approved: true, published: true });
    expect(publishes).toBe(2); // the first publish's completion never landed
  });

  it('routes a rejection along the node edges like any answer, and asks again under a new request id', async () => {
    const store = makeStore();
    const calls = { count: 0 };
    const g = approvalGraph(calls);
    await run(g, { title: 'Pricing changes' }, { store, runId: 'r' });

    await answer(
      store,
      'r',
      'r/approve:1',
      { approved: false, note: 'the second section misstates the price' },
      { by: 'editor' },
    );
    const again = await resume(store, g, 'r');

    expect(again.status).toBe('waiting');
    expect(calls.count).toBe(2);
    expect(again.state).toMatchObject({ edits: 2, note: 'the second section misstates the price' });
    const open = await store.listWaits('r', { open: true });
    expect(open.map((w) => w.requestId)).toEqual(['r/approve:2']);
    expect(JSON.parse(open[0]!.request).prompt).toBe('Publish "Pricing changes" (edit 2)?');
  });

  it('leaves a waiting run as it is when resumed without an answer, writing nothing', async () => {
    const store = makeStore();
    const g = approvalGraph({ count: 0 });
    await run(g, { title: 't' }, { store, runId: 'r' });
    const seq = (await store.getRun('r'))?.seq;

    const still = await resume(store, g, 'r');

    expect(still.status).toBe('waiting');
    expect((await store.getRun('r'))?.seq).toBe(seq);
  });

  it('refuses a wrong answer, an unknown request, an unknown run and a second answer, each with its own code, recording nothing', async () => {
    const store = makeStore();
    const g = approvalGraph({ count: 0 });
    await run(g, { title: 't' }, { store, runId: 'r' });

    expect(await code(answer(store, 'r', 'r/approve:1', { approved: 'yes' }, { by: 'a' }))).toBe(
      'ANSWER_INVALID',
    );
    expect(
      await code(answer(store, 'r', 'r/approve:1', { approved: 'yes' }, { by: 'a', graph: g })),
    ).toBe('ANSWER_INVALID');
    expect(await code(answer(store, 'r', 'r/nope:1', { approved: true }, { by: 'a' }))).toBe(
      'WAIT_NOT_FOUND',
    );
    expect(await code(answer(store, 'nope', 'r/approve:1', { approved: true }, { by: 'a' }))).toBe(
      'RUN_NOT_FOUND',
    );
    expect((await store.listWaits('r', { open: true })).map((w) => w.requestId)).toEqual([
      'r/approve:1',
    ]);

    await answer(store, 'r', 'r/approve:1', { approved: true }, { by: 'first' });
    expect(
      await code(answer(store, 'r', 'r/approve:1', { approved: false }, { by: 'second' })),
    ).toBe('WAIT_ALREADY_ANSWERED');
    const [wait] = await store.listWaits('r');
    expect(wait).toMatchObject({
      answeredBy: 'first',
      answer: JSON.stringify({ approved: true, note: '' }),
    });
  });

  it('a waiting run under a graph whose state version it cannot reach: refused at once, and no answer is recorded', async () => {
    const store = makeStore();
    const calls = { count: 0 };
    await run(approvalGraph(calls), { title: 't' }, { store, runId: 'r' });
    const before = await store.getRun('r');
    // Version 2 of the state, with no migration from version 1.
    const v2 = graph('approval', { state: Post, stateVersion: 2 })
      .node('count', (s) => ({ edits: s.edits + 1 }), { visits: 3 })
      .node('approve', person({ prompt: 'publish?', answer: Approval }))
      .node('publish', () => ({ published: true }), { terminal: true })
      .edge('count', 'approve')
      .route('approve', (s) => (s.approved ? 'publish' : 'count'), ['publish', 'count'])
      .entry('count')
      .compile();

    await expect(resume(store, v2, 'r')).rejects.toMatchObject({ code: 'STATE_VERSION_UNKNOWN' });
    await expect(
      answer(store, 'r', 'r/approve:1', { approved: true }, { by: 'editor', graph: v2 }),
    ).rejects.toMatchObject({
      code: 'STATE_VERSION_UNKNOWN',
      message: expect.stringContaining('declares no migration from state version 1'),
    });

    expect(await store.listWaits('r', { open: true })).toHaveLength(1);
    expect((await store.getRun('r'))?.seq).toBe(before?.seq);
  });

  it('resolves a wait past its timeout as a timeout error value on the next resume', async () => {
    const store = makeStore();
    const clock = manualClock();
    const g = approvalGraph({ count: 0 }, 60_000);
    await run(g, { title: 't' }, { store, runId: 'r', clock });

    const early = await resume(store, g, 'r', { clock });
    expect(early.status).toBe('waiting');

    await clock.sleep(60_001);
    const late = await resume(store, g, 'r', { clock });

    expect(late.status).toBe('succeeded');
    expect(late.state.note).toBe('gave up: WAIT_TIMED_OUT');
    expect(late.errors.map((e) => [e.code, e.class])).toEqual([['WAIT_TIMED_OUT', 'timeout']]);
  });
});

describe.each(stores)(
  'an answer that cannot become state, with the %s store',
  (_name, makeStore) => {
    // A loose answer schema lets a field through that is no state field: the update is refused.
    const loose = graph('loose', { state: Post })
      .node(
        'approve',
        person({ prompt: 'Publish?', answer: z.looseObject({ approved: z.boolean() }) }),
      )
      .node('publish', () => ({ published: true }), { terminal: true })
      .edge('approve', 'publish')
      .entry('approve')
      .compile();

    it("answer() with the graph refuses it with the update's code, and records nothing", async () => {
      const store = makeStore();
      await run(loose, { title: 't' }, { store, runId: 'r' });

      const refused = answer(
        store,
        'r',
        'r/approve:1',
        { approved: true, aproved: true },
        {
          by: 'ed',
          graph: loose,
        },
      );

      expect(await code(refused)).toBe('UPDATE_INVALID');
      await expect(refused).rejects.toThrow(/"aproved", which is not a state field/);
      expect(await store.listWaits('r', { open: true })).toHaveLength(1);
    });

    it('recorded without the graph, the resume fails the run at the person: never left waiting on a closed wait', async () => {
      const store = makeStore();
      await run(loose, { title: 't' }, { store, runId: 'r' });
      await answer(store, 'r', 'r/approve:1', { approved: true, aproved: true }, { by: 'ed' });

      const after = await resume(store, loose, 'r');

      expect(after.status).toBe('failed');
      expect(after.errors.map((e) => [e.code, e.node])).toEqual([['UPDATE_INVALID', 'approve']]);
      expect(await store.listWaits('r', { open: true })).toEqual([]);
    });
  },
);

describe('a person stop point without a store', () => {
  it('still stops the run waiting: there is nobody to answer, and that is the truth', async () => {
    const result = await run(approvalGraph({ count: 0 }), { title: 't' });
    expect(result.status).toBe('waiting');
  });
});
