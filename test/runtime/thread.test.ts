import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  append,
  continueThread,
  graph,
  isWaymarkError,
  person,
  previousLabel,
  run,
  threadLabel,
} from '../../src/index.js';
import { stores } from '../support/stores.js';

// Threads: a finished run continued with new input as the next run of the same conversation,
// from its final state, the input applied through the reducers.

const Message = z.object({ role: z.enum(['user', 'bot']), text: z.string() });
const chat = graph('chat', {
  state: z.object({ messages: z.array(Message).default([]), turns: z.number().default(0) }),
  reducers: { messages: append },
})
  .node(
    'reply',
    (s) => {
      const last = s.messages.at(-1);
      return {
        messages: [
          { role: 'bot' as const, text: `you said "${last?.text}" (turn ${s.turns + 1})` },
        ],
        turns: s.turns + 1,
      };
    },
    { terminal: true },
  )
  .entry('reply')
  .compile();

const say = (text: string) => ({ messages: [{ role: 'user' as const, text }] });

const codeOf = (p: Promise<unknown>) =>
  p.then(
    () => 'resolved',
    (e: unknown) => (isWaymarkError(e) ? e.code : String(e)),
  );

describe.each(stores)('a thread of runs, with the %s store', (_name, makeStore) => {
  it("holds a three-turn chat: each turn starts from the last one's state, the new message appended", async () => {
    const store = makeStore();
    const first = await run(chat, say('hello'), { store, runId: 't1' });
    const second = await continueThread(store, chat, first.runId, say('how are you?'), {
      runId: 't2',
    });
    const third = await continueThread(store, chat, second.runId, say('bye'), { runId: 't3' });
    expect(third.status).toBe('succeeded');
    expect(third.state.turns).toBe(3);
    expect(third.state.messages.map((m) => `${m.role}: ${m.text}`)).toEqual([
      'user: hello',
      'bot: you said "hello" (turn 1)',
      'user: how are you?',
      'bot: you said "how are you?" (turn 2)',
      'user: bye',
      'bot: you said "bye" (turn 3)',
    ]);
    // Each run is labelled with its thread (the first run's id) and the run it continues.
    const labels = async (id: string) => JSON.parse((await store.getRun(id))?.labels ?? '{}');
    expect(await labels('t2')).toMatchObject({ [threadLabel]: 't1', [previousLabel]: 't1' });
    expect(await labels('t3')).toMatchObject({ [threadLabel]: 't1', [previousLabel]: 't2' });
    expect((await store.listRuns({ labels: { [threadLabel]: 't1' } })).map((r) => r.id)).toEqual([
      't3',
      't2',
    ]);
    // The earlier runs are left as they were.
    expect((await store.getRun('t1'))?.seq).toBe(first.trace.entries.length + 1);
  });

  it('refuses to continue a run that has not succeeded, or with input that is not state, recording nothing', async () => {
    const store = makeStore();
    const asking = graph('asking', { state: z.object({ ok: z.boolean().default(false) }) })
      .node('ask', person({ prompt: () => 'ok?', answer: z.object({ ok: z.boolean() }) }), {
        terminal: true,
      })
      .entry('ask')
      .compile();
    await run(asking, {}, { store, runId: 'w' });
    expect(await codeOf(continueThread(store, asking, 'w', {}))).toBe('RUN_NOT_CONTINUABLE');
    await run(chat, say('hello'), { store, runId: 't1' });
    expect(await codeOf(continueThread(store, chat, 't1', { mood: 'happy' }))).toBe(
      'OPTIONS_INVALID',
    );
    expect(await codeOf(continueThread(store, chat, 't1', { turns: 'three' }))).toBe(
      'OPTIONS_INVALID',
    );
    expect(await codeOf(continueThread(store, chat, 'nope', say('hi')))).toBe('RUN_NOT_FOUND');
    expect((await store.listRuns()).map((r) => r.id).sort()).toEqual(['t1', 'w']);
  });
});
