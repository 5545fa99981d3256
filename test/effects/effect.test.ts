import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { append, END, graph, MemoryStore, resume, run } from '../../src/index.js';

const State = z.object({
  items: z.array(z.string()).default([]),
  posts: z.array(z.string()).default([]),
  note: z.string().default(''),
});

/** A receiver that remembers what it was sent under each key, like a CMS with idempotency keys. */
function receiver() {
  const byKey = new Map<string, string>();
  let calls = 0;
  return {
    byKey,
    get calls() {
      return calls;
    },
    post(key: string, body: string): string {
      calls++;
      if (!byKey.has(key)) byKey.set(key, `post-${byKey.size + 1}: ${body}`);
      return byKey.get(key)!;
    },
  };
}

describe('ctx.effect', () => {
  it('calls the effect once with a key from run, activation and name, and returns its result', async () => {
    const cms = receiver();
    const keys: string[] = [];
    const g = graph('publish', { state: State })
      .node('publish', async (_s, ctx) => {
        const post = await ctx.effect('post', (key) => {
          keys.push(key);
          return cms.post(key, 'hello');
        });
        return { note: post };
      })
      .edge('publish', END)
      .entry('publish')
      .compile();

    const result = await run(g, {}, { runId: 'run-1' });

    expect(keys).toEqual(['run-1/publish:1/post']);
    expect(result.state.note).toBe('post-1: hello');
  });

  it('does not repeat an effect when a later failure makes the node retry: the recorded result returns', async () => {
    const cms = receiver();
    let attempts = 0;
    const g = graph('publish', { state: State })
      .node(
        'publish',
        async (_s, ctx) => {
          attempts++;
          const post = await ctx.effect('post', (key) => cms.post(key, 'hello'));
          if (attempts === 1) throw new Error('the notification after the post failed');
          return { note: post };
        },
        { retry: { attempts: 2 } },
      )
      .edge('publish', END)
      .entry('publish')
      .compile();

    const result = await run(g, {});

    expect(result.status).toBe('succeeded');
    expect(attempts).toBe(2);
    expect(cms.calls).toBe(1);
    expect(result.state.note).toBe('post-1: hello');
  });

  it('does not repeat an effect when a failed run is resumed', async () => {
    const cms = receiver();
    const store = new MemoryStore();
    let fail = true;
    const g = graph('publish', { state: State })
      .node('publish', async (_s, ctx) => {
        const post = await ctx.effect('post', (key) => cms.post(key, 'hello'));
        if (fail) throw new Error('the run died after posting');
        return { note: post };
      })
      .edge('publish', END)
      .entry('publish')
      .compile();

    const first = await run(g, {}, { store });
    expect(first.status).toBe('failed');
    fail = false;
    const second = await resume(store, g, first.runId);

    expect(second.status).toBe('succeeded');
    expect(cms.calls).toBe(1);
    expect(cms.byKey.size).toBe(1);
    expect((await store.getEffect(first.runId, `${first.runId}/publish:1/post`))?.result).toBe(
      JSON.stringify('post-1: hello'),
    );
  });

  it('gives each branch of a map its own key, and each loop round its own key', async () => {
    const keys: string[] = [];
    const g = graph('fan', { state: State, reducers: { posts: append } })
      .node('list', () => ({}))
      .node(
        'send',
        async (_s, ctx) => ({
          posts: [
            await ctx.effect('post', (key) => {
              keys.push(key);
              return String(ctx.item);
            }),
          ],
        }),
        { writes: ['posts'] },
      )
      .node('done', () => ({}))
      .map('list', { over: 'items', branch: 'send', join: 'done' })
      .edge('send', 'done')
      .edge('done', END)
      .entry('list')
      .compile();

    const result = await run(g, { items: ['a', 'b', 'c'] }, { runId: 'r' });

    expect(result.state.posts).toEqual(['a', 'b', 'c']);
    expect(keys.sort()).toEqual([
      'r/list:1[0]/send:1/post',
      'r/list:1[1]/send:1/post',
      'r/list:1[2]/send:1/post',
    ]);
  });

  it('refuses two effects with one name in one attempt: two intents must not share a key', async () => {
    const cms = receiver();
    const g = graph('twice', { state: State })
      .node('publish', async (_s, ctx) => {
        await ctx.effect('post', (key) => cms.post(key, 'first'));
        await ctx.effect('post', (key) => cms.post(key, 'second'));
      })
      .edge('publish', END)
      .entry('publish')
      .compile();

    const result = await run(g, {});

    expect(result.status === 'failed' && result.error).toMatchObject({
      code: 'EFFECT_NAME_REUSED',
      class: 'permanent',
    });
    expect(cms.calls).toBe(1);
  });

  it('refuses an effect result that is not JSON, so a replay could not return it', async () => {
    const g = graph('bad', { state: State })
      .node('publish', async (_s, ctx) => {
        await ctx.effect('post', () => ({ big: 10n }));
      })
      .edge('publish', END)
      .entry('publish')
      .compile();
    const result = await run(g, {});
    expect(result.status === 'failed' && result.error.code).toBe('EFFECT_RESULT_INVALID');
  });
});

describe('ctx.effect names', () => {
  it('refuses an effect without a name: the name is part of its key', async () => {
    const g = graph('nameless', { state: State })
      .node('publish', async (_s, ctx) => {
        await ctx.effect('', () => 'x');
      })
      .edge('publish', END)
      .entry('publish')
      .compile();
    const result = await run(g, {});
    expect(result.status === 'failed' && result.error.code).toBe('EFFECT_NAME_INVALID');
  });
});
