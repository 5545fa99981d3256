import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { GitScope } from './git.js';
import { git } from './git.js';
import { serially } from './serially.js';

type Scope = Omit<GitScope, 'workTree' | 'cwd'> & { readonly gitDir: string };

/**
 * Makes a fresh working copy at `path` with `commit` checked out (detached: no branch is taken,
 * so any number of workspaces can hold the same commit, and no config is written). Whatever was
 * at `path` before (a crashed attempt's copy) is removed first: every attempt starts clean.
 *
 * @example
 * await addWorktree({ gitDir, signal, node: 'fix' }, '/tmp/ws/run-1/fix-1', base);
 */
export function addWorktree(scope: Scope, path: string, commit: string): Promise<void> {
  return serially(scope.gitDir, async () => {
    if (existsSync(path)) await removeLocked(scope, path);
    mkdirSync(dirname(path), { recursive: true });
    // --force: a path whose directory is gone but is still registered (a crash, a manual rm).
    await git(scope, ['worktree', 'add', '--quiet', '--detach', '--force', path, commit]);
  });
}

/**
 * Removes a working copy and its registration, modified files and all.
 *
 * @example
 * await removeWorktree({ gitDir, signal, node: 'fix' }, path);
 */
export function removeWorktree(scope: Scope, path: string): Promise<void> {
  return serially(scope.gitDir, () => removeLocked(scope, path));
}

async function removeLocked(scope: Scope, path: string): Promise<void> {
  const removed = await git(scope, ['worktree', 'remove', '--force', '--force', path], {
    accept: [0, 128],
  });
  if (removed.exitCode === 0) return;
  // Not (or no longer) a registered worktree: the files go, and git forgets what is gone.
  rmSync(path, { recursive: true, force: true });
  await git(scope, ['worktree', 'prune']);
}

/**
 * The common git directory of the repository a working copy belongs to, read from its `.git`
 * file; undefined when `path` is not a linked worktree.
 *
 * @example
 * const gitDir = worktreeRepo('/tmp/ws/run-1/fix-1');
 */
export function worktreeRepo(path: string): string | undefined {
  try {
    const text = readFileSync(join(path, '.git'), 'utf8');
    const admin = /^gitdir: (.+)$/m.exec(text)?.[1]?.trim();
    if (admin === undefined) return undefined;
    const common = readFileSync(join(admin, 'commondir'), 'utf8').trim();
    return join(admin, common);
  } catch {
    return undefined;
  }
}
