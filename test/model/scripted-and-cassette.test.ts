import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateText, streamText } from 'ai';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { all, append, END, graph, run } from '../../src/index.js';
import {
  type CallOptions,
  type LanguageModelV3,
  model,
  recordModel,
  replayModel,
  requestKey,
  scriptedModel,
} from '../../src/model/index.js';

const dir = () => mkdtempSync(join(tmpdir(), 'waymark-model-'));

describe('scriptedModel', () => {
  it('answers in order, keeps every request, and estimates tokens when the script gives none', async () => {
    const m = scriptedModel([
      'first',
      { text: 'second', usage: { inputTokens: 7, outputTokens: 3 } },
    ]);

    const a = await generateText({ model: m, prompt: 'one two three four' });
    const b = await generateText({ model: m, prompt: 'again' });

    expect([a.text, b.text]).toEqual(['first', 'second']);
    expect(a.usage.inputTokens).toBe(Math.ceil('user: one two three four'.length / 4));
    expect(b.usage).toMatchObject({ inputTokens: 7, outputTokens: 3 });
    expect(m.requests.map((r) => [r.call, r.text])).toEqual([
      [1, 'user: one two three four'],
      [2, 'user: again'],
    ]);
  });

  it('called once more than its list has, fails with SCRIPT_EXHAUSTED', async () => {
    await expect(
      generateText({ model: scriptedModel([]), prompt: 'x', maxRetries: 0 }),
    ).rejects.toThrow(/SCRIPT_EXHAUSTED/);
  });

  it('serves streamText through the same script', async () => {
    const result = streamText({ model: scriptedModel(['streamed']), prompt: 'x' });
    expect(await result.text).toBe('streamed');
  });
});

describe('record and replay', () => {
  const call = (text: string, extra: Partial<CallOptions> = {}): CallOptions => ({
    prompt: [{ role: 'user', content: [{ type: 'text', text }] }],
    ...extra,
  });

  it('key a request by its prompt and settings, not by its signal or headers', () => {
    const key = requestKey(call('hi'));
    expect(key).toMatch(/^[0-9a-f]{64}$/);
    expect(
      requestKey(
        call('hi', { headers: { 'x-trace': '1' }, abortSignal: new AbortController().signal }),
      ),
    ).toBe(key);
    expect(requestKey(call('hi', { temperature: 0 }))).not.toBe(key);
    expect(requestKey(call('ho'))).not.toBe(key);
  });

  it('a replay gives the recorded answer, usage included, without calling the recorded model', async () => {
    const file = join(dir(), 'deep', 'c.json');
    const real = scriptedModel([{ text: 'recorded', usage: { inputTokens: 5, outputTokens: 2 } }]);
    await generateText({ model: recordModel(real, file), prompt: 'q' });

    const replayed = await generateText({ model: replayModel(file), prompt: 'q' });

    expect(replayed.text).toBe('recorded');
    expect(replayed.usage).toMatchObject({ inputTokens: 5, outputTokens: 2 });
    expect(real.requests).toHaveLength(1);
    expect(replayModel(file).modelId).toBe('model');
    expect(replayModel(file).provider).toBe('scripted');
  });

  it('a missing or broken cassette is CASSETTE_INVALID', async () => {
    const d = dir();
    writeFileSync(join(d, 'bad.json'), '{ nope');
    writeFileSync(join(d, 'other.json'), '{"version": 2}');
    for (const f of ['missing.json', 'bad.json', 'other.json']) {
      await expect(
        generateText({ model: replayModel(join(d, f)), prompt: 'q', maxRetries: 0 }),
      ).rejects.toThrow(/CASSETTE_INVALID/);
    }
  });

  it('branches recording side by side both land in the cassette', async () => {
    const file = join(dir(), 'fan.json');
    const real = scriptedModel((r) => ({ object: { note: r.text.slice(-1) } }));
    const State = z.object({ notes: z.array(z.string()).default([]) });
    const fan = (make: () => LanguageModelV3) => {
      const note = (n: string) =>
        model({
          model: make(),
          prompt: () => `note ${n}`,
          output: z.object({ note: z.string() }),
          update: (o) => ({ notes: [o.note] }),
        });
      return graph('fan', { state: State, reducers: { notes: append } })
        .node('start', () => ({}))
        .node('a', note('a'), { kind: 'model', writes: ['notes'] })
        .node('b', note('b'), { kind: 'model', writes: ['notes'] })
        .node('join', () => ({}), { join: all() })
        .fanOut('start', ['a', 'b'], 'join')
        .edge('a', 'join')
        .edge('b', 'join')
        .edge('join', END)
        .entry('start')
        .compile();
    };

    // One recordModel per node, on one file.
    const recorded = await run(
      fan(() => recordModel(real, file)),
      {},
    );
    const replayed = await run(
      fan(() => replayModel(file)),
      {},
    );

    expect(recorded.state.notes).toEqual(['a', 'b']);
    expect(replayed.state.notes).toEqual(['a', 'b']);
  });
});
