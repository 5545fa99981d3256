// resume(..., { goto }) and patchState(..., { asNode }): an operator moves a run that waits or
// stopped to another node, or completes a node in its stead (LangGraph.js: Command({ goto })
// sent from outside, updateState(config, values, asNode)). Each is one recorded event, replayed
// like any other; a node the run cannot be at is refused, recording nothing.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  answer,
  append,
  END,
  graph,
  history,
  inspect,
  isWaymarkError,
  patchState,
  permanentError,
  person,
  resume,
  run,
  type Store,
  type StreamEvent,
  watch,
} from '../../src/index.js';
import { checkHistory } from '../../src/testing/index.js';
import { describePg, pgStoreForFile } from '../store/fixtures/postgres.js';
import { stores } from '../support/stores.js';

const State = z.object({
  severity: z.enum(['low', 'high']).default('low'),
  notes: z.array(z.string()).default([]),
  approved: z.boolean().default(false),
  sent: z.string().default(''),
  files: z.array(z.string()).default(['a', 'b']),
});

/** classify -> approve (a person) -> send, which fails unless severity is high; escalate -> send. */
const triage = graph('goto-triage', { state: State, reducers: { notes: append } })
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
  .node('escalate', () => ({ severity: 'high' as const, notes: ['escalated'] }), {
    writes: ['severity', 'notes'],
  })
  .route('classify', (s) => (s.notes.includes('urgent') ? 'escalate' : 'approve'), [
    'approve',
    'escalate',
  ])
  .edge('approve', 'send')
  .edge('escalate', 'send')
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

const seqOf = async (store: Store, runId: string) => (await store.getRun(runId))?.seq;

/** A failed run: classify, approve (answered), send (failed: severity is low). */
async function failedAtSend(store: Store): Promise<void> {
  await run(triage, {}, { store, runId: 'r1' });
  await answer(store, 'r1', 'r1/approve:1', { approved: true }, { by: 'ed' });
  expect((await resume(store, triage, 'r1')).status).toBe('failed');
}

function behaviours(makeStore: () => Store) {
  it('resume with goto moves a failed run to another node: its failed activation is dropped, the node runs on the state as it stands', async () => {
    const store = makeStore();
    await failedAtSend(store);
    const done = await resume(store, triage, 'r1', { goto: 'escalate' });
    expect(done.status).toBe('succeeded');
    expect(done.state.sent).toBe('sent (classified, escalated)');
    expect(done.trace.entries.map((e) => e.node)).toEqual(['escalate', 'send']);
    const steps = (await history(store, triage, 'r1')).steps;
    expect(steps.find((s) => s.event === 'moved')).toMatchObject({ status: 'running' });
    // Replayed from the history like any step: the stored run says the same.
    expect((await inspect(store, triage, 'r1')).snapshot.state).toEqual(done.state);
    const told = await read(watch(store, triage, 'r1', { follow: false }));
    expect(told.find((e) => e.type === 'run' && e.cause === 'moved')).toBeDefined();
  });

  it('a node moved back to runs as a new activation: a new id, its effects applied again, no completion twice', async () => {
    const store = makeStore();
    let sent = 0;
    let fail = true;
    const chain = graph('goto-again', { state: z.object({ n: z.number().default(0) }) })
      .node('draft', async (s, ctx) => {
        await ctx.effect('send', async () => ++sent);
        return { n: s.n + 1 };
      })
      .node('check', () => {
        if (fail) throw permanentError('not yet');
        return {};
      })
      .node('done', () => ({}), { terminal: true })
      .edge('draft', 'check')
      .edge('check', 'done')
      .entry('draft')
      .compile();
    expect((await run(chain, {}, { store, runId: 'g1' })).status).toBe('failed');
    fail = false;

    const done = await resume(store, chain, 'g1', { goto: 'draft' });

    expect(done.status).toBe('succeeded');
    expect(done.state.n).toBe(2);
    expect(done.trace.entries.map((e) => e.activation)).toEqual(['draft:2', 'check:2', 'done:1']);
    // The effect is keyed by its activation: draft:2's is its own, so it was applied again.
    expect(sent).toBe(2);
    expect((await store.listEffects('g1')).map((e) => e.key)).toEqual([
      'g1/draft:1/send',
      'g1/draft:2/send',
    ]);
    expect((await checkHistory(store, { runs: ['g1'], graphs: [chain] })).violations).toEqual([]);
    // A patch as a node: what follows it, run before, is a new activation too.
    fail = true;
    expect((await run(chain, {}, { store, runId: 'g2' })).status).toBe('failed');
    fail = false;
    await patchState(store, chain, 'g2', { n: 9 }, { by: 'a', reason: 'b', asNode: 'draft' });
    const patched = await resume(store, chain, 'g2');
    expect(patched.trace.entries.map((e) => e.activation)).toEqual(['check:2', 'done:1']);
    expect((await checkHistory(store, { runs: ['g2'], graphs: [chain] })).violations).toEqual([]);
  });

  it('goto upstream of a person opens its wait again under a new id, which an answer reaches', async () => {
    const store = makeStore();
    await failedAtSend(store);

    const moved = await resume(store, triage, 'r1', { goto: 'classify' });

    expect(moved.status).toBe('waiting');
    const open = await store.listWaits('r1', { open: true });
    expect(open.map((w) => w.requestId)).toEqual(['r1/approve:2']);
    await answer(store, 'r1', 'r1/approve:2', { approved: true }, { by: 'ed' });
    expect((await resume(store, triage, 'r1')).status).toBe('failed');
    expect((await inspect(store, triage, 'r1')).trace.entries.map((e) => e.activation)).toContain(
      'send:2',
    );
  });

  it('resume with goto moves a waiting run on: its wait is closed and can no longer be answered', async () => {
    const store = makeStore();
    await run(triage, {}, { store, runId: 'r1' });
    const done = await resume(store, triage, 'r1', { goto: 'escalate' });
    expect(done.status).toBe('succeeded');
    expect(done.state.approved).toBe(false);
    expect(
      await codeOf(answer(store, 'r1', 'r1/approve:1', { approved: true }, { by: 'ed' })),
    ).not.toBe('resolved');
  });

  it('goto refuses a node the run cannot be at, with a did-you-mean, and records nothing', async () => {
    const store = makeStore();
    await failedAtSend(store);
    const before = await seqOf(store, 'r1');
    const misspelt = await resume(store, triage, 'r1', { goto: 'escalte' }).catch(
      (e: unknown) => e,
    );
    expect(misspelt).toMatchObject({
      code: 'GOTO_INVALID',
      details: { option: 'goto', node: 'escalte', suggestion: 'escalate' },
    });
    expect(String((misspelt as Error).message)).toContain('did you mean "escalate"?');
    expect(await codeOf(resume(store, triage, 'r1', { goto: END }))).toBe('GOTO_INVALID');
    expect(await seqOf(store, 'r1')).toBe(before);
    // Refused, the run is as it was: a plain resume runs send again.
    expect((await inspect(store, triage, 'r1')).snapshot.status).toBe('failed');
  });

  it('goto counts against the visit cap of the node it moves to', async () => {
    const capped = graph('goto-capped', { state: State })
      .node('fix', () => ({ notes: ['fixed'] }), { visits: 1 })
      .node('check', () => {
        throw permanentError('NODE_FAILED', 'still broken');
      })
      .edge('fix', 'check')
      .entry('fix')
      .edge('check', END)
      .compile();
    const store = makeStore();
    expect((await run(capped, {}, { store, runId: 'r1' })).status).toBe('failed');
    const again = await resume(store, capped, 'r1', { goto: 'fix' });
    expect(again.status).toBe('failed');
    expect('error' in again && again.error.code).toBe('VISIT_CAP');
  });

  it('patchState with asNode completes that node in its stead: its wait is dropped and what follows it waits for a resume', async () => {
    const store = makeStore();
    await run(triage, {}, { store, runId: 'r1' });
    const after = await patchState(
      store,
      triage,
      'r1',
      { approved: true, severity: 'high' },
      { by: 'ana', reason: 'approved on the phone', asNode: 'approve' },
    );
    expect(after.status).toBe('waiting');
    expect(after.pending.map((a) => [a.node, a.paused])).toEqual([['send', true]]);
    const done = await resume(store, triage, 'r1');
    expect(done.status).toBe('succeeded');
    expect(done.trace.entries.map((e) => e.node)).toEqual(['send']);
    const steps = (await history(store, triage, 'r1')).steps;
    expect(steps.find((s) => s.event === 'patched')).toMatchObject({ status: 'waiting' });
    const told = await read(watch(store, triage, 'r1', { follow: false }));
    expect(told.find((e) => e.type === 'state.patched')).toMatchObject({ asNode: 'approve' });
    expect(
      await codeOf(answer(store, 'r1', 'r1/approve:1', { approved: true }, { by: 'ed' })),
    ).not.toBe('resolved');
  });

  it('patchState with asNode checks the update against the node writes and refuses a node the run cannot be at, recording nothing', async () => {
    const store = makeStore();
    await failedAtSend(store);
    const before = await seqOf(store, 'r1');
    const by = { by: 'ana', reason: 'test' };
    expect(
      await codeOf(patchState(store, triage, 'r1', { sent: 'x' }, { ...by, asNode: 'escalate' })),
    ).toBe('WRITE_DENIED');
    expect(
      await codeOf(patchState(store, triage, 'r1', { notes: ['x'] }, { ...by, asNode: 'escalat' })),
    ).toBe('GOTO_INVALID');
    expect(await seqOf(store, 'r1')).toBe(before);
    const after = await patchState(
      store,
      triage,
      'r1',
      { severity: 'high' },
      { ...by, asNode: 'escalate' },
    );
    expect(after.pending.map((a) => a.node)).toEqual(['send']);
    expect((await resume(store, triage, 'r1')).state.sent).toBe('sent (classified)');
  });

  it('a patch as a node whose edge ends the run finishes it', async () => {
    const store = makeStore();
    await failedAtSend(store);
    const after = await patchState(
      store,
      triage,
      'r1',
      { sent: 'by hand' },
      { by: 'ana', reason: 'sent it myself', asNode: 'send' },
    );
    expect(after.status).toBe('succeeded');
    expect(after.state.sent).toBe('by hand');
  });
}

describe.each(stores)('moving a run with the %s store', (_name, makeStore) => {
  behaviours(makeStore);

  it('goto on a run that succeeded is refused: it is not moved again', async () => {
    const store = makeStore();
    await failedAtSend(store);
    await patchState(
      store,
      triage,
      'r1',
      { sent: 'by hand' },
      { by: 'a', reason: 'b', asNode: 'send' },
    );
    const before = await seqOf(store, 'r1');
    expect(await codeOf(resume(store, triage, 'r1', { goto: 'escalate' }))).toBe(
      'RUN_NOT_RESUMABLE',
    );
    expect(await seqOf(store, 'r1')).toBe(before);
  });
});

const db = pgStoreForFile();

describePg('moving a run on PostgreSQL', () => {
  behaviours(() => db.store);
});

describe('ported from LangGraph.js', () => {
  // pregel.test.ts, "checkpoint events / updateState asNode": after updateState(values, asNode)
  // the next tasks are the node's successors, and invoking with null runs them.
  it('updateState(config, values, asNode) schedules what follows asNode on the new state (ported from LangGraph.js)', async () => {
    const Chat = z.object({ messages: z.array(z.string()).default([]) });
    const agent = graph('lg-agent', { state: Chat, reducers: { messages: append } })
      .node('agent', () => ({ messages: ['thinking'] }), { visits: 3 })
      .node('tools', () => ({ messages: ['tool result'] }))
      .route('agent', (s) => (s.messages.at(-1) === 'call a tool' ? 'tools' : END), ['tools', END])
      .edge('tools', 'agent')
      .entry('agent')
      .compile();
    const store = new (await import('../../src/index.js')).MemoryStore();
    const first = await run(agent, {}, { store, runId: 'r1', pauseBefore: ['agent'] });
    expect(first.status).toBe('waiting');
    const after = await patchState(
      store,
      agent,
      'r1',
      { messages: ['call a tool'] },
      { by: 'test', reason: 'as the agent', asNode: 'agent' },
    );
    expect(after.pending.map((a) => a.node)).toEqual(['tools']);
    // tools runs, then the breakpoint before agent holds the run once more.
    expect((await resume(store, agent, 'r1')).status).toBe('waiting');
    const done = await resume(store, agent, 'r1');
    expect(done.state.messages).toEqual(['call a tool', 'tool result', 'thinking']);
  });

  // pregel.test.ts, "Command goto from outside": invoke(new Command({ goto: 'node' })) on an
  // interrupted thread drops the pending interrupt and runs from that node.
  it('Command({ goto }) sent to an interrupted run continues it at that node (ported from LangGraph.js)', async () => {
    const Flow = z.object({ visited: z.array(z.string()).default([]) });
    const flow = graph('lg-goto', { state: Flow, reducers: { visited: append } })
      .node('a', () => ({ visited: ['a'] }))
      .node('ask', person({ prompt: () => 'go on?', answer: z.object({}) }))
      .node('b', () => ({ visited: ['b'] }))
      .node('c', () => ({ visited: ['c'] }))
      .edge('a', 'ask')
      .route('ask', () => 'b', ['b', 'c'])
      .entry('a')
      .edge('b', END)
      .edge('c', END)
      .compile();
    const store = new (await import('../../src/index.js')).MemoryStore();
    expect((await run(flow, {}, { store, runId: 'r1' })).status).toBe('waiting');
    const done = await resume(store, flow, 'r1', { goto: 'c' });
    expect(done.state.visited).toEqual(['a', 'c']);
  });
});
