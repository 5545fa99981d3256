import { existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  answer,
  END,
  endRunWorkspaces,
  graph,
  type Patch,
  permanentError,
  person,
  resume,
  run,
  workspacePatch,
} from '../../src/index.js';
import { SqliteStore } from '../../src/sqlite.js';
import { gitIn, makeRepo, writeFiles } from '../support/git-repo.js';

let root: string;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'waymark-ws-'));
  process.env.WAYMARK_WORKSPACES = root;
});

const State = z.object({
  a: workspacePatch(),
  b: workspacePatch(),
  seen: z.array(z.string()).default([]),
});

describe('a workspace', () => {
  it('is made fresh for every attempt: a retry does not see what a failed attempt left, which is kept for a look until the run succeeds', async () => {
    const repo = makeRepo({ 'a.txt': 'one\n' });
    const g = graph('retry-fresh', { state: State.extend({ ok: z.boolean().default(false) }) })
      .node(
        'work',
        async (_s, ctx) => {
          const leftover = existsSync(ctx.workspace!.resolve('junk.txt'));
          if (ctx.attempt === 1) {
            await ctx.workspace!.write('junk.txt', 'half done\n');
            throw new Error('the first attempt breaks');
          }
          await ctx.workspace!.write('a.txt', 'two\n');
          return { seen: [`attempt ${ctx.attempt} saw junk: ${leftover}`] };
        },
        { workspace: { repo, patch: 'a' }, retry: { attempts: 2 }, writes: ['seen'] },
      )
      .node('check', person({ prompt: 'Looks right?', answer: z.object({ ok: z.boolean() }) }))
      .edge('work', 'check')
      .edge('check', END)
      .entry('work')
      .compile();
    const store = new SqliteStore(':memory:');
    const waiting = await run(g, {}, { store, runId: 'fresh' });
    expect(waiting.status).toBe('waiting');
    expect(waiting.state.seen).toEqual(['attempt 2 saw junk: false']);
    expect((waiting.state.a as Patch).files).toEqual([{ path: 'a.txt', status: 'modified' }]);
    const dir = join(root, 'runs', 'fresh');
    // The failed attempt's copy stays, with its mark, while the run lives; the one that
    // succeeded is gone.
    expect(readdirSync(dir).sort()).toEqual(['work_1-5ca0903b.1', 'work_1-5ca0903b.1.kept.json']);
    expect(readFileSync(join(dir, 'work_1-5ca0903b.1', 'junk.txt'), 'utf8')).toBe('half done\n');
    // The run's host sees it succeed and removes what was kept, with its git worktree record.
    const [wait] = await store.listWaits('fresh', { open: true });
    await answer(store, 'fresh', wait!.requestId, { ok: true }, { by: 'ed' });
    expect((await resume(store, g, 'fresh')).status).toBe('succeeded');
    expect(existsSync(dir)).toBe(false);
    expect(gitIn(repo, 'worktree', 'list', '--porcelain').match(/^worktree /gm)).toHaveLength(1);
    await store.close();
  });

  it('keeps the copies of a run that ended failed: its host leaves them for a look', async () => {
    const repo = makeRepo({ 'a.txt': 'one\n' });
    const g = graph('fails', { state: State })
      .node(
        'work',
        async (_s, ctx) => {
          await ctx.workspace!.write('a.txt', 'broken\n');
          throw permanentError('gave up');
        },
        { workspace: { repo, patch: 'a' } },
      )
      .edge('work', END)
      .entry('work')
      .compile();
    const result = await run(g, {});
    expect(result.status).toBe('failed');
    // Ended failed: even told again, nothing goes.
    await endRunWorkspaces(result.runId, 'failed');
    const dir = join(root, 'runs', result.runId);
    const kept = readdirSync(dir).find((n) => n.endsWith('.1'))!;
    expect(readFileSync(join(dir, kept, 'a.txt'), 'utf8')).toBe('broken\n');
    const mark = JSON.parse(readFileSync(join(dir, `${kept}.kept.json`), 'utf8'));
    expect(mark.until - Date.now()).toBeGreaterThan(23 * 60 * 60 * 1000);
  });

  it('resolves its base revision once per run: a later node starts from the same commit after main moved', async () => {
    const repo = makeRepo({ 'a.txt': 'one\n' });
    const before = gitIn(repo, 'rev-parse', 'main');
    const g = graph('base-once', { state: State })
      .node(
        'first',
        async () => {
          // Someone pushes to main while the run works.
          writeFiles(repo, { 'a.txt': 'moved\n' });
          gitIn(repo, 'commit', '--quiet', '-am', 'moved');
        },
        { workspace: { repo, base: 'main', patch: 'a' } },
      )
      .node('second', async (_s, ctx) => ({ seen: [await ctx.workspace!.read('a.txt')] }), {
        workspace: { repo, base: 'main', patch: 'b' },
        writes: ['seen'],
      })
      .edge('first', 'second')
      .edge('second', END)
      .entry('first')
      .compile();
    const result = await run(g, {});
    expect(result.status).toBe('succeeded');
    expect(gitIn(repo, 'rev-parse', 'main')).not.toBe(before);
    expect((result.state.a as Patch).base).toBe(before);
    expect((result.state.b as Patch).base).toBe(before);
    expect(result.state.seen).toEqual(['one\n']);
  });

  it('starts from the patch in its field: a chain of workspace nodes builds on each other', async () => {
    const repo = makeRepo({ 'a.txt': 'one\n' });
    const g = graph('chain', { state: State })
      .node('first', async (_s, ctx) => ctx.workspace!.write('b.txt', 'added\n'), {
        workspace: { repo, patch: 'a' },
      })
      .node(
        'second',
        async (_s, ctx) => {
          await ctx.workspace!.remove('a.txt');
          return { seen: [await ctx.workspace!.read('b.txt')] };
        },
        { workspace: { repo, patch: 'a' }, writes: ['seen'] },
      )
      .edge('first', 'second')
      .edge('second', END)
      .entry('first')
      .compile();
    const result = await run(g, {});
    expect(result.state.seen).toEqual(['added\n']);
    expect((result.state.a as Patch).files).toEqual([
      { path: 'a.txt', status: 'deleted' },
      { path: 'b.txt', status: 'added' },
    ]);
  });

  it('copies a directory that is not a git repository, and its patches work the same way', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'waymark-plain-'));
    writeFiles(dir, { 'notes/a.md': '# A\n', '.gitignore': 'build/\n', 'build/out.bin': 'x' });
    const g = graph('plain-dir', { state: State })
      .node(
        'first',
        async (_s, ctx) => {
          const text = await ctx.workspace!.read('notes/a.md');
          await ctx.workspace!.write('notes/a.md', `${text}more\n`);
        },
        { workspace: { repo: dir, patch: 'a' } },
      )
      .node('second', async (_s, ctx) => ({ seen: [await ctx.workspace!.read('notes/a.md')] }), {
        workspace: { repo: dir, patch: 'a' },
        writes: ['seen'],
      })
      .edge('first', 'second')
      .edge('second', END)
      .entry('first')
      .compile();
    const result = await run(g, {});
    expect(result.status).toBe('succeeded');
    expect(result.state.seen).toEqual(['# A\nmore\n']);
    expect((result.state.a as Patch).files).toEqual([{ path: 'notes/a.md', status: 'modified' }]);
    // The directory itself is left as it was, and git never wrote into it.
    expect(readFileSync(join(dir, 'notes/a.md'), 'utf8')).toBe('# A\n');
    expect(existsSync(join(dir, '.git'))).toBe(false);
  });

  it('fails the node with WORKSPACE_BASE_UNKNOWN when its base names no commit', async () => {
    const repo = makeRepo({ 'a.txt': 'one\n' });
    const g = graph('bad-base', { state: State })
      .node('work', async () => {}, { workspace: { repo, base: 'no-such-branch', patch: 'a' } })
      .edge('work', END)
      .entry('work')
      .compile();
    const result = await run(g, {});
    expect(result.status).toBe('failed');
    expect(result.errors.at(-1)?.code).toBe('WORKSPACE_BASE_UNKNOWN');
  });

  it('is reused by a later run only when it starts from a recorded commit, never from a revision that can move', async () => {
    const repo = makeRepo({ 'a.txt': 'one\n' });
    const ran: string[] = [];
    const g = graph('reuse', { state: State })
      .node(
        'first',
        async (_s, ctx) => {
          ran.push(`first ${ctx.runId}`);
          await ctx.workspace!.write('b.txt', 'b\n');
        },
        { workspace: { repo, base: 'main', patch: 'a' }, reads: [], writes: [] },
      )
      .node(
        'second',
        async (_s, ctx) => {
          ran.push(`second ${ctx.runId}`);
          await ctx.workspace!.write('c.txt', 'c\n');
        },
        { workspace: { repo, patch: 'a' }, reads: [], writes: [] },
      )
      .edge('first', 'second')
      .edge('second', END)
      .entry('first')
      .compile();
    const store = new SqliteStore({ path: ':memory:' });
    const one = await run(g, {}, { store, runId: 'reuse-1' });
    const two = await run(g, {}, { store, runId: 'reuse-2', reuseFrom: 'reuse-1' });
    expect(two.status).toBe('succeeded');
    // first starts from main, which may have moved: it runs again. Its patch is the same
    // commit, so second, which starts from that recorded commit, is read back.
    expect(ran).toEqual(['first reuse-1', 'second reuse-1', 'first reuse-2']);
    expect((two.state.a as Patch).commit).toBe((one.state.a as Patch).commit);
    await store.close();
  });
});
