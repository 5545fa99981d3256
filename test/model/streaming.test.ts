import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { tool } from 'ai';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { END, graph, run, type StreamEvent, watch } from '../../src/index.js';
import { agent, model, scriptedModel } from '../../src/model/index.js';
import { SqliteStore } from '../../src/sqlite.js';

// A model node with `stream: true` streams its reply: its token deltas, partial objects and tool
// calls reach the run's live watchers as ephemeral `delta` events while the node runs, and
// nothing of them is recorded; the checked output is stored as the update, as without it.

const State = z.object({
  topic: z.string(),
  title: z.string().default(''),
  words: z.number().default(0),
});
const Title = z.object({ title: z.string(), words: z.number() });

function titled(m: ReturnType<typeof scriptedModel>, stream = true) {
  return graph('streamed-title', { state: State })
    .node('name', model({ model: m, prompt: (s) => `Name ${s.topic}`, output: Title, stream }), {
      writes: ['title', 'words'],
    })
    .edge('name', END)
    .entry('name')
    .compile();
}

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('a model node with stream: true', () => {
  it('tells its text deltas and partial objects live, in order, before its completion', async () => {
    const m = scriptedModel([{ object: { title: 'Tea first', words: 2 } }], { chunkSize: 5 });
    const seen: StreamEvent[] = [];
    const result = await run(titled(m), { topic: 'tea' }, { watch: (e) => seen.push(e) });
    expect(result.state).toMatchObject({ title: 'Tea first', words: 2 });
    const deltas = seen.filter((e) => e.type === 'delta');
    const text = deltas.filter((e) => e.name === 'model.text');
    expect(text.map((e) => (e.data as { delta: string }).delta).join('')).toBe(
      JSON.stringify({ title: 'Tea first', words: 2 }),
    );
    expect(text.length).toBeGreaterThan(3);
    const partials = deltas.filter((e) => e.name === 'model.partial').map((e) => e.data);
    expect(partials.at(-1)).toEqual({ object: { title: 'Tea first', words: 2 } });
    expect(partials.length).toBeGreaterThan(1);
    for (const d of deltas) {
      expect(d).toMatchObject({ ephemeral: true, node: 'name', activation: 'name:1', attempt: 1 });
    }
    // Live: all of them before the completion of their activation.
    const completed = seen.findIndex((e) => e.type === 'activation.completed');
    expect(seen.findLastIndex((e) => e.type === 'delta')).toBeLessThan(completed);
  });

  it('records none of them: a watcher reading the store sees the same run without deltas', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'waymark-stream-model-'));
    dirs.push(dir);
    const store = new SqliteStore({ path: join(dir, 'runs.db') });
    const m = scriptedModel([{ object: { title: 'Tea first', words: 2 } }], { chunkSize: 3 });
    const live: StreamEvent[] = [];
    const g = titled(m);
    await run(g, { topic: 'tea' }, { store, runId: 'r1', watch: (e) => live.push(e) });
    const stored: StreamEvent[] = [];
    for await (const e of watch(store, g, 'r1', { follow: false })) stored.push(e);
    expect(stored.some((e) => e.type === 'delta')).toBe(false);
    expect(stored).toEqual(live.filter((e) => e.type !== 'delta'));
    // A delta's offset is the last recorded event's: resuming after it misses nothing recorded.
    const firstDelta = live.find((e) => e.type === 'delta')!;
    const after: StreamEvent[] = [];
    for await (const e of watch(store, g, 'r1', { follow: false, after: firstDelta.offset }))
      after.push(e);
    const index = live.indexOf(firstDelta);
    expect(after).toEqual(live.slice(index + 1).filter((e) => e.type !== 'delta'));
    await store.close();
  });

  it('without stream, tells no deltas: the same output through generateText', async () => {
    const m = scriptedModel([{ object: { title: 'Tea first', words: 2 } }], { chunkSize: 5 });
    const seen: StreamEvent[] = [];
    const result = await run(titled(m, false), { topic: 'tea' }, { watch: (e) => seen.push(e) });
    expect(result.state).toMatchObject({ title: 'Tea first' });
    expect(seen.some((e) => e.type === 'delta')).toBe(false);
  });

  it('retries a streamed reply that fails the schema, as a generated one is retried', async () => {
    const m = scriptedModel([{ text: '{"title": 5' }, { object: { title: 'Tea', words: 1 } }], {
      chunkSize: 4,
    });
    const seen: StreamEvent[] = [];
    const result = await run(titled(m), { topic: 'tea' }, { watch: (e) => seen.push(e) });
    expect(result.state).toMatchObject({ title: 'Tea', words: 1 });
    expect(m.requests).toHaveLength(2);
    expect(m.requests[1]!.text).toContain('did not match the required JSON schema');
    expect(result.trace.entries[0]!.turns).toHaveLength(2);
  });

  it("tells an agent's tool calls as they are made", async () => {
    const m = scriptedModel(
      [
        { toolCalls: [{ toolName: 'lookup', input: { q: 'tea' } }] },
        { object: { title: 'Tea facts', words: 2 } },
      ],
      { chunkSize: 8 },
    );
    const g = graph('streamed-agent', { state: State })
      .node(
        'name',
        agent({
          model: m,
          prompt: (s) => `Name ${s.topic}`,
          output: Title,
          tools: {
            lookup: tool({
              inputSchema: z.object({ q: z.string() }),
              execute: async ({ q }) => `facts about ${q}`,
            }),
          },
          maxTurns: 4,
          stream: true,
        }),
        { writes: ['title', 'words'] },
      )
      .edge('name', END)
      .entry('name')
      .compile();
    const seen: StreamEvent[] = [];
    const result = await run(g, { topic: 'tea' }, { watch: (e) => seen.push(e) });
    expect(result.state).toMatchObject({ title: 'Tea facts' });
    const calls = seen.filter((e) => e.type === 'delta' && e.name === 'model.tool-call');
    expect(calls.map((e) => e.type === 'delta' && e.data)).toEqual([
      { tool: 'lookup', input: { q: 'tea' } },
    ]);
    // The second turn's partial objects start afresh, not from the first turn's text.
    const partials = seen.filter((e) => e.type === 'delta' && e.name === 'model.partial');
    expect(partials.at(-1)).toMatchObject({ data: { object: { title: 'Tea facts', words: 2 } } });
  });
});
