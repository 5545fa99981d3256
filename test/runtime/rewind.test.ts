import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  answer,
  append,
  graph,
  isWaymarkError,
  loadTrace,
  person,
  resume,
  rewind,
  run,
} from '../../src/index.js';
import { stores } from '../support/stores.js';

const Blog = z.object({
  version: z.string(),
  changelog: z.array(z.string()).default([]),
  selected: z.array(z.string()).default([]),
  outline: z.array(z.string()).default([]),
  notes: z.array(z.string()).default([]),
  draft: z.string().default(''),
  findings: z.array(z.string()).default([]),
  approved: z.boolean().default(false),
  url: z.string().default(''),
});

/** The changelog-to-blog pipeline: fetch, select, outline, draft, fact-check, approval, publish. */
function changelogPost(calls: Record<string, number>) {
  const count = (name: string) => {
    calls[name] = (calls[name] ?? 0) + 1;
  };
  return graph('changelog-post', { state: Blog, reducers: { notes: append } })
    .node(
      'fetch',
      (s) => {
        count('fetch');
        return { changelog: [`${s.version}: prices now in cents`, `${s.version}: new CSV export`] };
      },
      { reads: ['version'] },
    )
    .node(
      'select',
      (s) => {
        count('select');
        return { selected: s.changelog };
      },
      { reads: ['changelog'] },
    )
    .node(
      'outline',
      (s) => {
        count('outline');
        return { outline: s.selected.map((e) => `section: ${e}`) };
      },
      { reads: ['selected'] },
    )
    .node(
      'draft',
      (s) => {
        count('draft');
        const fix = s.notes.length > 0 ? ' (prices are in cents)' : ' (prices are in dollars)';
        return { draft: s.outline.join('\n') + fix };
      },
      { reads: ['outline', 'notes'], visits: 3 },
    )
    .node(
      'fact-check',
      (s) => {
        count('fact-check');
        return {
          findings: s.draft.includes('dollars') ? ['claims dollars; the changelog says cents'] : [],
        };
      },
      { reads: ['draft', 'changelog'] },
    )
    .node(
      'approval',
      person({
        prompt: (s) => `Publish?\n${s.draft}`,
        answer: z.object({ approved: z.boolean() }),
      }),
    )
    .node(
      'publish',
      async (_s, ctx) => {
        count('publish');
        return { url: await ctx.effect('post', (key) => `https://blog.example/${key}`) };
      },
      { terminal: true, reads: ['draft'] },
    )
    .edge('fetch', 'select')
    .edge('select', 'outline')
    .edge('outline', 'draft')
    .edge('draft', 'fact-check')
    .edge('fact-check', 'approval')
    .route('approval', (s) => (s.approved ? 'publish' : 'draft'), ['publish', 'draft'])
    .entry('fetch')
    .compile();
}

describe.each(stores)('rewinding a run, with the %s store', (_name, makeStore) => {
  it('reruns draft with the editor note, then fact-check and the approval; fetch, select and outline do not run', async () => {
    const store = makeStore();
    const calls: Record<string, number> = {};
    const g = changelogPost(calls);
    const first = await run(g, { version: '2.4' }, { store, runId: 'first' });
    expect(first.status).toBe('waiting');
    expect(first.state.findings).toEqual(['claims dollars; the changelog says cents']);

    for (const key of Object.keys(calls)) delete calls[key];
    const second = await rewind(store, g, 'first', {
      to: 'draft',
      update: { notes: ['the second section misstates the pricing change'] },
      runId: 'second',
    });

    expect(second.status).toBe('waiting');
    expect(calls).toEqual({ draft: 1, 'fact-check': 1 });
    expect(second.state.notes).toEqual(['the second section misstates the pricing change']);
    expect(second.state.draft).toContain('prices are in cents');
    expect(second.state.findings).toEqual([]);
    expect(second.trace.path).toEqual(['draft', 'fact-check']);
    expect((await store.listWaits('second', { open: true })).map((w) => w.requestId)).toEqual([
      'second/approval:1',
    ]);
    // The earlier run is left as it was.
    expect((await store.getRun('first'))?.status).toBe('waiting');

    await answer(store, 'second', 'second/approval:1', { approved: true }, { by: 'editor' });
    const published = await resume(store, g, 'second');
    expect(published.state.url).toBe('https://blog.example/second/publish:1/post');
    expect((await loadTrace(store, 'second')).path).toEqual([
      'draft',
      'fact-check',
      'approval',
      'publish',
    ]);
  });

  it('reuses an unchanged downstream output: a fork with no note reruns only what reads the note field', async () => {
    const store = makeStore();
    const calls: Record<string, number> = {};
    const g = changelogPost(calls);
    await run(g, { version: '2.4' }, { store, runId: 'first' });
    for (const key of Object.keys(calls)) delete calls[key];

    const fork = await rewind(store, g, 'first', { to: 'outline', runId: 'fork' });

    // outline, draft and fact-check read what they read before: their outputs are read back.
    expect(calls).toEqual({});
    expect(fork.trace.entries.map((e) => [e.node, e.reused])).toEqual([
      ['outline', true],
      ['draft', true],
      ['fact-check', true],
    ]);
    expect(fork.status).toBe('waiting');
  });

  it('refuses a node the run never reached, and a run it does not have', async () => {
    const store = makeStore();
    const g = changelogPost({});
    await run(g, { version: '2.4' }, { store, runId: 'first' });
    const code = (p: Promise<unknown>) =>
      p.then(
        () => 'resolved',
        (e: unknown) => (isWaymarkError(e) ? e.code : String(e)),
      );
    expect(await code(rewind(store, g, 'first', { to: 'publish' }))).toBe('OPTIONS_INVALID');
    expect(await code(rewind(store, g, 'nope', { to: 'draft' }))).toBe('RUN_NOT_FOUND');
  });
});

describe('a fact-check failure caused upstream', () => {
  it('routes back to draft as a value with the finding as input; earlier steps do not run again', async () => {
    const calls: Record<string, number> = {};
    const count = (name: string) => {
      calls[name] = (calls[name] ?? 0) + 1;
    };
    const checked: string[] = [];
    const g = graph('changelog-post', { state: Blog })
      .node('fetch', () => {
        count('fetch');
        return { changelog: ['2.4: prices now in cents'] };
      })
      .node('select', (s) => {
        count('select');
        return { selected: s.changelog };
      })
      .node('outline', (s) => {
        count('outline');
        return { outline: s.selected };
      })
      .node(
        'draft',
        (s) => {
          count('draft');
          // The first draft adds a claim the changelog does not contain; the second drops it.
          const claims =
            s.findings.length > 0 ? s.outline : [...s.outline, '2.4: free for students'];
          return { draft: claims.join('\n') };
        },
        { visits: 3 },
      )
      .node('fact-check', (s) => {
        count('fact-check');
        checked.push(s.draft);
        const unsupported = s.draft.split('\n').filter((claim) => !s.changelog.includes(claim));
        return { findings: unsupported.map((claim) => `not in the changelog: ${claim}`) };
      })
      .node('publish', () => ({ url: 'done' }), { terminal: true })
      .edge('fetch', 'select')
      .edge('select', 'outline')
      .edge('outline', 'draft')
      .edge('draft', 'fact-check')
      .route('fact-check', (s) => (s.findings.length > 0 ? 'draft' : 'publish'), [
        'draft',
        'publish',
      ])
      .entry('fetch')
      .compile();

    const result = await run(g, { version: '2.4' });

    expect(result.status).toBe('succeeded');
    expect(calls).toEqual({ fetch: 1, select: 1, outline: 1, draft: 2, 'fact-check': 2 });
    expect(checked).toEqual([
      '2.4: prices now in cents\n2.4: free for students',
      '2.4: prices now in cents',
    ]);
    expect(result.errors).toEqual([]);
    expect(result.trace.path).toEqual([
      'fetch',
      'select',
      'outline',
      'draft',
      'fact-check',
      'draft',
      'fact-check',
      'publish',
    ]);
  });
});
