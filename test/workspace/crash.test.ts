import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, expect, it } from 'vitest';
import { type Patch, resume } from '../../src/index.js';
import { SqliteStore } from '../../src/sqlite.js';
import { fileAt, gitIn, makeRepo } from '../support/git-repo.js';
import { crashGraph } from './crash-graph.js';

let root: string;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'waymark-ws-'));
  process.env.WAYMARK_WORKSPACES = root;
});

const child = fileURLToPath(new URL('./crash-child.ts', import.meta.url));
const lines = (log: string) =>
  existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n') : [];

async function until(what: string, ok: () => boolean | Promise<boolean>, ms = 60_000) {
  const end = Date.now() + ms;
  while (!(await ok())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

it('re-creates a branch killed inside its workspace from the base, and keeps the patch of the branch that had finished', async () => {
  const repo = makeRepo({ 'src/price.js': 'export const price = (n) => n * 100;\n' });
  const work = mkdtempSync(join(tmpdir(), 'waymark-crash-'));
  const [db, log, runId] = [join(work, 'runs.db'), join(work, 'log'), 'crash-1'];
  const proc = spawn(process.execPath, ['--import', 'tsx', child, db, repo, log, runId], {
    env: { ...process.env, HANG_FIX: '1', WAYMARK_WORKSPACES: root },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise((resolve) =>
    proc.on('exit', (code, signal) => resolve(signal ?? code)),
  );
  const store = new SqliteStore({ path: db });
  try {
    // The tests branch has committed its completion, and fix is inside its working copy.
    await until('the tests branch to complete and fix to hang', async () => {
      if (!lines(log).some((l) => l.startsWith('fix-hangs'))) return false;
      const events = existsSync(db) ? await store.events(runId).catch(() => []) : [];
      return events.some((e) => e.event.includes('"completed"') && e.event.includes('tests:1'));
    });
    const testsBefore = (await store.events(runId))
      .map((e) => JSON.parse(e.event))
      .find((e) => e.type === 'completed' && String(e.activation).endsWith('tests:1')).update
      .code as Patch;
    proc.kill('SIGKILL');
    expect(await exited).toBe('SIGKILL');
    const crashed = lines(log)
      .find((l) => l.startsWith('fix '))!
      .split(' ')[2]!;
    expect(readFileSync(join(crashed, 'half.txt'), 'utf8')).toContain('interrupts');

    const result = await resume(store, crashGraph(repo, log), runId);
    expect(result.status).toBe('succeeded');
    const log2 = lines(log);
    // tests ran once, in the killed process; fix ran again, in a fresh copy at the same place.
    expect(log2.filter((l) => l.startsWith('tests '))).toHaveLength(1);
    const fixes = log2.filter((l) => l.startsWith('fix '));
    expect(fixes).toHaveLength(2);
    expect(fixes[1]).toBe(`fix ${process.pid} ${crashed} half:false`);
    const code = result.state.code as Patch;
    expect(code.files.map((f) => f.path)).toEqual(['src/price.js', 'test/price.test.js']);
    expect(fileAt(repo, code.commit, 'src/price.js')).toContain('Math.round');
    // The finished branch's patch is the one it recorded before the crash, merged as it was.
    expect(gitIn(repo, 'merge-base', '--is-ancestor', testsBefore.commit, code.commit)).toBe('');
    expect(gitIn(repo, 'worktree', 'list', '--porcelain').match(/^worktree /gm)).toHaveLength(1);
  } finally {
    proc.kill('SIGKILL');
    await store.close();
  }
}, 120_000);
