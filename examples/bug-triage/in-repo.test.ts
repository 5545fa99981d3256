import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { answer, MemoryStore, type Patch, resume, run } from '../../src/index.js';
import { bugTriageInRepo } from './in-repo.js';
import { scriptedInRepo } from './in-repo-scripted.js';
import { makeBugRepo } from './repo.js';

beforeAll(() => {
  process.env.WAYMARK_WORKSPACES = mkdtempSync(join(tmpdir(), 'bug-triage-ws-'));
});

const git = (repo: string, ...args: string[]) =>
  execFileSync('git', args, { cwd: repo, encoding: 'utf8' }).trim();
const commentsFile = () =>
  join(mkdtempSync(join(tmpdir(), 'bug-triage-comments-')), 'comments.jsonl');

describe('the bug-triage example over a real repository', () => {
  it('fixes a logic bug with fix-code and update-tests in their own working copies, merges their patches at the join and verifies the merged tree', async () => {
    const repo = makeBugRepo();
    const main = git(repo, 'rev-parse', 'main');
    const comments = commentsFile();
    const result = await run(bugTriageInRepo({ repo, comments }), { bug: 'search-pagination' });

    expect(result.status).toBe('succeeded');
    // The two branches finish in either order; the join waits for both.
    const { path } = result.trace;
    expect(path.slice(0, 4)).toEqual(['triage', 'reproduce', 'investigate', 'plan-fix']);
    expect([...path.slice(4, 6)].sort()).toEqual(['fix-code', 'update-tests']);
    expect(path.slice(6)).toEqual(['merge', 'verify', 'done']);
    const code = result.state.code as Patch;
    expect(code.base).toBe(main);
    expect(code.files).toEqual([
      { path: 'search/paginate.mjs', status: 'modified' },
      { path: 'search/paginate.regression.mjs', status: 'added' },
    ]);
    expect(result.state.verification?.passed).toBe(true);
    expect(result.state.verification?.runs.map((r) => r.stdout.trim().split('\n').at(-1))).toEqual([
      'repro: pages are right',
      'paginate regression: ok',
    ]);
    expect(result.state.outcome).toBe(
      `fixed on ${code.commit.slice(0, 12)}: search/paginate.mjs, search/paginate.regression.mjs`,
    );
    // The repository is as it was: the work is in its objects, under refs/waymark/.
    expect(git(repo, 'status', '--porcelain')).toBe('');
    expect(git(repo, 'rev-parse', 'main')).toBe(main);
    expect(git(repo, 'show', `${code.commit}:search/paginate.mjs`)).toContain('start + size);');
  });

  it('has the agent read the suspect and comment on the report through the local MCP server, each call in the trace', async () => {
    const repo = makeBugRepo();
    const comments = commentsFile();
    const result = await run(bugTriageInRepo({ repo, comments }), { bug: 'search-pagination' });

    expect(result.state.investigation).toBe(
      'read search/paginate.mjs; commented on search-pagination',
    );
    const posted = readFileSync(comments, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(posted).toEqual([
      {
        id: 1,
        key: `${result.runId}/investigate:1/mcp:repo.post_comment#1`,
        body: 'Looking at search/paginate.mjs for "Search results skip one item per page": a fix and a regression test are on the way.',
      },
    ]);
    const turns = result.trace.entries.find((e) => e.node === 'investigate')!.turns!;
    expect(turns.flatMap((t) => t.tools ?? []).map((c) => [c.tool, c.error?.code ?? 'ok'])).toEqual(
      [
        ['repo.read_file', 'ok'],
        ['repo.post_comment', 'ok'],
      ],
    );
  });

  it('sends a deliberately conflicting pair of patches to a person, who decides, with the conflicting file named', async () => {
    const repo = makeBugRepo();
    const store = new MemoryStore();
    const g = bugTriageInRepo({
      repo,
      comments: commentsFile(),
      model: scriptedInRepo({ conflicting: true }),
    });
    const first = await run(g, { bug: 'search-pagination' }, { store, runId: 'conflict-1' });

    expect(first.status).toBe('waiting');
    expect(first.trace.path.slice(-2)).toEqual(['merge', 'conflict']);
    expect(first.trace.path).toEqual(expect.arrayContaining(['fix-code', 'update-tests']));
    expect(first.state.conflict).toEqual({
      files: ['search/paginate.mjs'],
      summary: '1 conflicting hunk(s) (MERGE_CONFLICT)',
    });
    expect(first.errors.at(-1)?.code).toBe('MERGE_CONFLICT');
    // Nothing was merged: the run's change is still what reproduce started from.
    expect((first.state.code as Patch).files).toEqual([]);
    const [wait] = await store.listWaits('conflict-1', { open: true });
    expect(JSON.parse(wait!.request).prompt).toContain('both changed search/paginate.mjs');

    await answer(
      store,
      'conflict-1',
      wait!.requestId,
      { note: 'keep the fix; redo the test' },
      { by: 'lead' },
    );
    const done = await resume(store, g, 'conflict-1');
    expect(done.status).toBe('succeeded');
    expect(done.state.outcome).toBe(
      'escalated: the branches conflict in search/paginate.mjs; the reviewer says: keep the fix; redo the test',
    );
  });
});
