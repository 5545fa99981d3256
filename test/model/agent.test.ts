import { tool } from 'ai';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { END, graph, MemoryStore, resume, run } from '../../src/index.js';
import {
  type AgentOptions,
  agent,
  effectTool,
  type ScriptedModel,
  scriptedModel,
} from '../../src/model/index.js';

const State = z.object({
  files: z.record(z.string(), z.string()).default({}),
  answer: z.string().default(''),
});
type S = z.output<typeof State>;
const Answer = z.object({ answer: z.string() });

const readFile = tool({
  description: 'Reads a file of the repository.',
  inputSchema: z.object({ path: z.string() }),
  execute: async ({ path }) => ({ text: `contents of ${path}` }),
});

function investigate(
  m: ScriptedModel,
  options: Partial<AgentOptions<S, z.output<typeof Answer>>> = {},
  retry = false,
) {
  return graph('agent', { state: State })
    .node(
      'investigate',
      agent({
        model: m,
        prompt: () => 'Where is the token checked?',
        tools: { read_file: readFile },
        output: Answer,
        maxTurns: 4,
        ...options,
      }),
      { kind: 'model', writes: ['answer'], ...(retry && { retry: { attempts: 2 } }) },
    )
    .edge('investigate', END)
    .entry('investigate')
    .compile();
}

const usage = { inputTokens: 10, outputTokens: 5 };

describe('an agent node', () => {
  it('calls tools turn by turn until it answers; each turn is under the attempt trace entry', async () => {
    const m = scriptedModel([
      { toolCalls: [{ toolName: 'read_file', input: { path: 'src/auth.ts' } }], usage },
      { object: { answer: 'src/auth.ts line 12' }, usage },
    ]);
    const result = await run(investigate(m), {});

    expect(result.status).toBe('succeeded');
    expect(result.state.answer).toBe('src/auth.ts line 12');
    expect(m.requests[1]?.text).toContain('result read_file');
    expect(m.requests[1]?.text).toContain('contents of src/auth.ts');
    const entry = result.trace.entries[0];
    const turn = { durationMs: expect.any(Number), usage: { ...usage, model: 'scripted:model' } };
    expect(entry?.turns).toEqual([
      { turn: 1, ...turn, toolCalls: ['read_file'] },
      { turn: 2, ...turn },
    ]);
    expect(entry?.usage).toEqual({ inputTokens: 20, outputTokens: 10, model: 'scripted:model' });
  });

  it('takes its tools from the state when given a function', async () => {
    const m = scriptedModel([
      { toolCalls: [{ toolName: 'cat', input: { path: 'a.ts' } }] },
      { object: { answer: 'done' } },
    ]);
    const g = investigate(m, {
      tools: (s) => ({
        cat: tool({
          inputSchema: z.object({ path: z.string() }),
          execute: async ({ path }) => s.files[path] ?? 'no such file',
        }),
      }),
    });

    await run(g, { files: { 'a.ts': 'export const a = 1;' } });

    expect(m.requests[0]?.tools).toEqual(['cat']);
    expect(m.requests[1]?.text).toContain('export const a = 1;');
  });

  it('hitting maxTurns without an answer is BUDGET_EXCEEDED, not a hang or a partial answer', async () => {
    const m = scriptedModel(() => ({
      toolCalls: [{ toolName: 'read_file', input: { path: 'a' } }],
      usage,
    }));
    const result = await run(investigate(m, { maxTurns: 3 }), {});

    expect(result.status).toBe('failed');
    expect(result.status === 'failed' && result.error).toMatchObject({
      code: 'BUDGET_EXCEEDED',
      class: 'budget',
      details: { limit: 'node.maxTurns', max: 3, spent: 3 },
    });
    expect(m.requests).toHaveLength(3);
    expect(result.state.answer).toBe('');
  });

  it('stops at the end of the turn that passes its token budget', async () => {
    const m = scriptedModel(() => ({
      toolCalls: [{ toolName: 'read_file', input: { path: 'a' } }],
      usage,
    }));
    const result = await run(investigate(m, { maxTurns: 10, maxTokens: 40 }), {});

    expect(result.status === 'failed' && result.error).toMatchObject({
      code: 'BUDGET_EXCEEDED',
      details: { limit: 'node.maxTokens', max: 40, spent: 45 },
    });
    expect(m.requests).toHaveLength(3);
  });

  it('a final answer that fails the schema is sent back with the error, within maxTurns', async () => {
    const m = scriptedModel([
      { toolCalls: [{ toolName: 'read_file', input: { path: 'a' } }] },
      { object: { answer: 42 } },
      { object: { answer: 'src/a.ts' } },
    ]);
    const result = await run(investigate(m), {});

    expect(result.state.answer).toBe('src/a.ts');
    expect(m.requests[2]?.text).toContain('result read_file');
    expect(m.requests[2]?.text).toMatch(/did not match the required JSON schema/);
  });
});

describe('an effect tool', () => {
  function posting(
    receiver: { keys: string[] },
    script: ScriptedModel,
    options: { retry?: { attempts: number } } = {},
  ) {
    const post = effectTool({
      description: 'Posts a comment.',
      inputSchema: z.object({ body: z.string() }),
      execute: async ({ body }, { key }) => {
        receiver.keys.push(key);
        return { id: `comment-${receiver.keys.length}`, body };
      },
    });
    return graph('agent', { state: State })
      .node(
        'respond',
        agent({
          model: script,
          prompt: () => 'Answer the issue.',
          tools: { post },
          output: Answer,
          maxTurns: 3,
        }),
        { kind: 'model', writes: ['answer'], ...options },
      )
      .edge('respond', END)
      .entry('respond')
      .compile();
  }

  // The model posts, then the provider fails on the next turn; the second time it works.
  function flaky() {
    let calls = 0;
    return scriptedModel(() => {
      calls++;
      if (calls % 2 === 1) return { toolCalls: [{ toolName: 'post', input: { body: 'hi' } }] };
      if (calls === 2) return { error: new Error('provider down') };
      return { object: { answer: 'posted' } };
    });
  }

  it('runs through ctx.effect: a resumed node gets the recorded result and does not post again', async () => {
    const receiver = { keys: [] as string[] };
    const store = new MemoryStore();
    const m = flaky();

    const first = await run(posting(receiver, m), {}, { store, runId: 'r' });
    expect(first.status === 'failed' && first.error).toMatchObject({
      code: 'MODEL_CALL_FAILED',
      class: 'transient',
    });
    expect(receiver.keys).toEqual(['r/respond:1/post#1']);

    const again = await resume(store, posting(receiver, m), 'r');

    expect(again.status).toBe('succeeded');
    expect(again.state.answer).toBe('posted');
    // The model asked to post again; the ledger answered with the first post.
    expect(m.requests).toHaveLength(4);
    expect(m.requests[3]?.text).toContain('comment-1');
    expect(receiver.keys).toEqual(['r/respond:1/post#1']);
  });

  it('a retried attempt gets the recorded result too: the receiver is called once', async () => {
    const receiver = { keys: [] as string[] };
    const m = flaky();
    const g = posting(receiver, m, { retry: { attempts: 2 } });

    const result = await run(g, {}, { runId: 'r' });

    expect(result.status).toBe('succeeded');
    expect(result.trace.entries.map((e) => e.status)).toEqual(['failed', 'succeeded']);
    expect(receiver.keys).toEqual(['r/respond:1/post#1']);
  });

  it('outside an agent node it refuses to run', async () => {
    const post = effectTool({ inputSchema: z.object({}), execute: () => 1 });
    expect(() =>
      (post.execute as (i: unknown, o: unknown) => unknown)({}, { toolCallId: 'x', messages: [] }),
    ).toThrow(/only inside an agent/);
  });
});
