import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, expect, it } from 'vitest';
import { z } from 'zod';
import {
  END,
  enqueue,
  graph,
  inspect,
  type NodeContext,
  type Patch,
  patches,
  Worker,
  workspacePatch,
} from '../../src/index.js';
import { describePg, pgStoreForFile } from '../store/fixtures/postgres.js';
import { fileAt, makeRepo } from '../support/git-repo.js';

// Workspaces live in the attempt, so a worker host makes and merges them as the in-process host
// does: the same graph, enqueued on PostgreSQL and run by two workers.

const db = pgStoreForFile();
beforeAll(() => {
  process.env.WAYMARK_WORKSPACES = mkdtempSync(join(tmpdir(), 'waymark-ws-'));
});

const State = z.object({ code: workspacePatch() });

describePg('workspaces on workers', () => {
  it('makes each branch its own working copy and merges the patches at the join, on any worker', async () => {
    const repo = makeRepo({ 'a.txt': 'a\n', 'b.txt': 'b\n' });
    const workspace = { repo, base: 'main', patch: 'code' } as const;
    const edit = (file: string) => async (_s: unknown, ctx: NodeContext) => {
      await ctx.workspace!.write(file, `${file} changed\n`);
    };
    const g = graph('ws-on-workers', { state: State })
      .node('plan', () => {})
      .node('left', edit('a.txt'), { workspace, reads: [], writes: [] })
      .node('right', edit('b.txt'), { workspace, reads: [], writes: [] })
      .node('merge', () => {}, { join: patches(), workspace })
      .fanOut('plan', ['left', 'right'], 'merge')
      .edge('left', 'merge')
      .edge('right', 'merge')
      .edge('merge', END)
      .entry('plan')
      .compile();
    const stop = new AbortController();
    const workers = [1, 2].map(() =>
      new Worker(db.store, [g], { leaseMs: 5_000, pollMs: 50 }).run(stop.signal),
    );
    try {
      const runId = await enqueue(db.store, g, {});
      let status = 'running';
      for (let i = 0; i < 600 && status === 'running'; i++) {
        await new Promise((r) => setTimeout(r, 50));
        status = (await db.store.getRun(runId))!.status;
      }
      expect(status).toBe('succeeded');
      const code = (await inspect(db.store, g, runId)).snapshot.state.code as Patch;
      expect(code.files.map((f) => f.path)).toEqual(['a.txt', 'b.txt']);
      expect(fileAt(repo, code.commit, 'b.txt')).toBe('b.txt changed\n');
    } finally {
      stop.abort();
      await Promise.all(workers);
    }
  }, 60_000);
});
