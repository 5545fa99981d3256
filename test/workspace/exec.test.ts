import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  END,
  type ErrorValue,
  graph,
  type NodeContext,
  run,
  workspacePatch,
} from '../../src/index.js';
import { makeRepo } from '../support/git-repo.js';

beforeAll(() => {
  process.env.WAYMARK_WORKSPACES = mkdtempSync(join(tmpdir(), 'waymark-ws-'));
});

const State = z.object({
  code: workspacePatch(),
  out: z.string().default(''),
  error: z.custom<ErrorValue>().nullable().default(null),
});

/** One workspace node whose body is `body`, failing into `caught` with the error recorded. */
function oneNode(repo: string, body: (ctx: NodeContext) => Promise<string>) {
  return graph('exec-in-workspace', { state: State })
    .node('work', async (_s, ctx) => ({ out: await body(ctx) }), {
      workspace: { repo, patch: 'code' },
      exec: ['node', 'cat', 'ls'],
      onError: 'caught',
      writes: ['out'],
    })
    .node('caught', (_s, ctx) => ({ error: ctx.error ?? null }), {
      terminal: true,
      writes: ['error'],
    })
    .edge('work', END)
    .entry('work')
    .compile();
}

async function refusal(repo: string, body: (ctx: NodeContext) => Promise<string>) {
  const result = await run(oneNode(repo, body), {});
  return result.state.error as ErrorValue | null;
}

describe('ctx.exec in a workspace node', () => {
  const secret = join(mkdtempSync(join(tmpdir(), 'waymark-outside-')), 'secret.txt');
  writeFileSync(secret, 'not yours\n');

  it("runs in the working copy by default, not in the repository or the engine's directory", async () => {
    const repo = makeRepo({ 'a.txt': 'in the copy\n' });
    const result = await run(
      oneNode(repo, async (ctx) => {
        const r = await ctx.exec(['node', '-e', 'process.stdout.write(process.cwd())']);
        return r.stdout;
      }),
      {},
    );
    expect(result.state.out).toMatch(/waymark-ws-.*\/runs\//);
    expect(result.state.out).not.toBe(repo);
  });

  it('runs programs on files inside the working copy, by relative path', async () => {
    const repo = makeRepo({ 'a.txt': 'in the copy\n' });
    const result = await run(
      oneNode(repo, async (ctx) => (await ctx.exec(['cat', 'a.txt'])).stdout),
      {},
    );
    expect(result.state.out).toBe('in the copy\n');
  });

  it('refuses a cwd outside the working copy with EXEC_OUTSIDE_WORKSPACE, before anything starts', async () => {
    const repo = makeRepo({ 'a.txt': 'x\n' });
    const error = await refusal(
      repo,
      async (ctx) => (await ctx.exec(['ls'], { cwd: repo })).stdout,
    );
    expect(error?.code).toBe('EXEC_OUTSIDE_WORKSPACE');
    expect(error?.class).toBe('permanent');
    expect(error?.details).toMatchObject({ cwd: repo });
  });

  it('refuses an absolute path outside the working copy as an argument', async () => {
    const repo = makeRepo({ 'a.txt': 'x\n' });
    const error = await refusal(repo, async (ctx) => (await ctx.exec(['cat', secret])).stdout);
    expect(error?.code).toBe('EXEC_OUTSIDE_WORKSPACE');
    expect(error?.details).toMatchObject({ argument: secret });
  });

  it('refuses a relative path that climbs out with .., also after --flag=', async () => {
    const repo = makeRepo({ 'a.txt': 'x\n' });
    const climb = await refusal(
      repo,
      async (ctx) => (await ctx.exec(['cat', '../../../../etc/passwd'])).stdout,
    );
    expect(climb?.code).toBe('EXEC_OUTSIDE_WORKSPACE');
    const flag = await refusal(
      repo,
      async (ctx) => (await ctx.exec(['ls', `--hide=${secret}`])).stdout,
    );
    expect(flag?.code).toBe('EXEC_OUTSIDE_WORKSPACE');
  });

  it('refuses a file helper path outside the working copy, also through a symlink', async () => {
    const repo = makeRepo({ 'a.txt': 'x\n' });
    const read = await refusal(repo, (ctx) => ctx.workspace!.read('../../outside.txt'));
    expect(read?.code).toBe('EXEC_OUTSIDE_WORKSPACE');
    const linked = await refusal(repo, async (ctx) => {
      await ctx.exec([
        'node',
        '-e',
        `require('fs').symlinkSync(${JSON.stringify(secret)}, 'link')`,
      ]);
      return ctx.workspace!.read('link');
    });
    expect(linked?.code).toBe('EXEC_OUTSIDE_WORKSPACE');
  });

  it('still holds the exec allowlist: a program not listed is EXEC_DENIED', async () => {
    const repo = makeRepo({ 'a.txt': 'x\n' });
    const error = await refusal(repo, async (ctx) => (await ctx.exec(['git', 'status'])).stdout);
    expect(error?.code).toBe('EXEC_DENIED');
  });
});
