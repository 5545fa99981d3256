import { existsSync, mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  END,
  type ErrorValue,
  graph,
  type NodeContext,
  type Patch,
  patches,
  rewind,
  run,
  workspacePatch,
} from '../../src/index.js';
import { SqliteStore } from '../../src/sqlite.js';
import { fileAt, gitIn, makeRepo } from '../support/git-repo.js';

beforeAll(() => {
  process.env.WAYMARK_WORKSPACES = mkdtempSync(join(tmpdir(), 'waymark-ws-'));
});

const State = z.object({
  code: workspacePatch(),
  log: z.array(z.string()).default([]),
  verified: z.string().default(''),
  error: z.custom<ErrorValue>().nullable().default(null),
});
type State = z.infer<typeof State>;
type Body = (s: Readonly<State>, ctx: NodeContext) => Promise<Partial<State> | undefined>;

const source = 'export function price(n) {\n  return n * 100;\n}\n';

/** plan -> (fix | tests) -> merge (patches join) -> verify, or resolve on a conflict. */
function pipeline(repo: string, fix: Body, tests: Body) {
  const workspace = { repo, base: 'main', patch: 'code' } as const;
  return graph('patch-join', { state: State })
    .node('plan', () => ({ log: ['plan'] }), { writes: ['log'] })
    .node('fix', fix, { workspace, reads: [], writes: [] })
    .node('tests', tests, { workspace, reads: [], writes: [] })
    .node(
      'merge',
      async (_s, ctx) => ({
        log: [`merge: ${(await ctx.workspace!.read('src/price.js')).split('\n')[1]!.trim()}`],
      }),
      { join: patches(), workspace, onError: 'resolve', writes: ['log'] },
    )
    .node(
      'verify',
      async (_s, ctx) => {
        const r = await ctx.exec(['node', 'test/price.test.js']);
        return { verified: `${r.exitCode}: ${r.stdout.trim()}` };
      },
      { workspace, exec: ['node'], writes: ['verified'] },
    )
    .node('resolve', (_s, ctx) => ({ error: ctx.error ?? null }), {
      terminal: true,
      writes: ['error'],
    })
    .fanOut('plan', ['fix', 'tests'], 'merge')
    .edge('fix', 'merge')
    .edge('tests', 'merge')
    .edge('merge', 'verify')
    .edge('verify', END)
    .entry('plan')
    .compile();
}

const fixPrice: Body = async (_s, ctx) => {
  const file = await ctx.workspace!.read('src/price.js');
  await ctx.workspace!.write('src/price.js', file.replace('n * 100', 'Math.round(n * 100)'));
  return undefined;
};
const addTest: Body = async (_s, ctx) => {
  await ctx.workspace!.write(
    'test/price.test.js',
    "import { price } from '../src/price.js';\nconsole.log(price(0.29));\n",
  );
  return undefined;
};

describe('a patches join', () => {
  it('merges two branches that change different files, and the next node works on the merged tree', async () => {
    const repo = makeRepo({ 'src/price.js': source, 'package.json': '{ "type": "module" }\n' });
    const base = gitIn(repo, 'rev-parse', 'main');
    const result = await run(pipeline(repo, fixPrice, addTest), {});
    expect(result.status).toBe('succeeded');
    const code = result.state.code as Patch;
    expect(code.base).toBe(base);
    expect(code.files).toEqual([
      { path: 'src/price.js', status: 'modified' },
      { path: 'test/price.test.js', status: 'added' },
    ]);
    // The merged commit holds both branches' files; the repository's own checkout is untouched.
    expect(fileAt(repo, code.commit, 'src/price.js')).toContain('Math.round(n * 100)');
    expect(fileAt(repo, code.commit, 'test/price.test.js')).toContain('price(0.29)');
    expect(gitIn(repo, 'status', '--porcelain')).toBe('');
    expect(gitIn(repo, 'rev-parse', 'main')).toBe(base);
    expect(result.state.log).toContain('merge: return Math.round(n * 100);');
    // 0.29 * 100 is 28.999999999999996: only the fixed code prints 29.
    expect(result.state.verified).toBe('0: 29');
    // Each patch is kept by a ref, so git's garbage collection cannot take it.
    expect(gitIn(repo, 'for-each-ref', '--format=%(objectname)', 'refs/waymark/patches')).toContain(
      code.commit,
    );
  });

  it("gives MERGE_CONFLICT, with the files and hunks, to the join's onError handler when both branches change the same lines", async () => {
    const repo = makeRepo({ 'src/price.js': source });
    const edit =
      (to: string): Body =>
      async (_s, ctx) => {
        await ctx.workspace!.write('src/price.js', source.replace('n * 100', to));
        return undefined;
      };
    const result = await run(pipeline(repo, edit('Math.round(n * 100)'), edit('n * 100 + 0')), {});
    expect(result.status).toBe('succeeded');
    const error = result.state.error as ErrorValue;
    expect(error.code).toBe('MERGE_CONFLICT');
    expect(error.node).toBe('merge');
    expect(error.class).toBe('permanent');
    const { conflicts } = error.details as { conflicts: unknown[] };
    expect(conflicts).toEqual([
      {
        path: 'src/price.js',
        type: 'contents',
        branch: 1,
        with: [0],
        hunks: [
          {
            line: 2,
            ours: '  return Math.round(n * 100);\n',
            base: '  return n * 100;\n',
            theirs: '  return n * 100 + 0;\n',
          },
        ],
      },
    ]);
    // Nothing was merged: the field still holds what it held before the fan-out.
    expect(result.state.code).toBeNull();
    expect(result.state.verified).toBe('');
  });

  it('takes the same patch again for the same result: the commit id depends only on the files and where they started', async () => {
    const repo = makeRepo({ 'src/price.js': source, 'package.json': '{ "type": "module" }\n' });
    const g = pipeline(repo, fixPrice, addTest);
    const [a, b] = [await run(g, {}), await run(g, {})];
    expect((a.state.code as Patch).commit).toBe((b.state.code as Patch).commit);
  });

  it('removes the working copies of attempts that succeeded', async () => {
    const repo = makeRepo({ 'src/price.js': source, 'package.json': '{ "type": "module" }\n' });
    const result = await run(pipeline(repo, fixPrice, addTest), {});
    const dir = join(process.env.WAYMARK_WORKSPACES!, 'runs', result.runId);
    expect(existsSync(dir) ? readdirSync(dir) : []).toEqual([]);
    expect(gitIn(repo, 'worktree', 'list', '--porcelain').match(/^worktree /gm)).toHaveLength(1);
  });

  it('runs a branch again from the base when the run is rewound to it', async () => {
    const repo = makeRepo({ 'src/price.js': source, 'package.json': '{ "type": "module" }\n' });
    const base = gitIn(repo, 'rev-parse', 'main');
    const seen: string[] = [];
    const fix: Body = async (_s, ctx) => {
      seen.push(`${ctx.runId} ${ctx.workspace!.start === base}`);
      return fixPrice(_s, ctx);
    };
    const g = pipeline(repo, fix, addTest);
    const store = new SqliteStore({ path: ':memory:' });
    const first = await run(g, {}, { store });
    const again = await rewind(store, g, first.runId, { to: 'fix' });
    expect(again.status).toBe('succeeded');
    expect(seen).toEqual([`${first.runId} true`, `${again.runId} true`]);
    expect((again.state.code as Patch).tree).toBe((first.state.code as Patch).tree);
    await store.close();
  });

  it('types a conflict as git does: one branch modifies a file the other deletes, and both add one path', async () => {
    const repo = makeRepo({ 'src/price.js': source, 'old.txt': 'old\n' });
    const left: Body = async (_s, ctx) => {
      await ctx.workspace!.write('old.txt', 'kept and changed\n');
      await ctx.workspace!.write('new.txt', 'left\n');
      return undefined;
    };
    const right: Body = async (_s, ctx) => {
      await ctx.workspace!.remove('old.txt');
      await ctx.workspace!.write('new.txt', 'right\n');
      return undefined;
    };
    const result = await run(pipeline(repo, left, right), {});
    const error = result.state.error as ErrorValue;
    expect(error.code).toBe('MERGE_CONFLICT');
    const conflicts = (
      error.details as { conflicts: { path: string; type: string; hunks: unknown[] }[] }
    ).conflicts;
    expect(conflicts.map((c) => [c.path, c.type])).toEqual([
      ['new.txt', expect.stringMatching(/^(contents|add\/add)$/)],
      ['old.txt', 'modify/delete'],
    ]);
    expect(conflicts[1]!.hunks).toEqual([]);
    expect(error.message).toContain('2 file(s) conflict (new.txt, old.txt)');
  });
});
