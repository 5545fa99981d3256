import { rmSync } from 'node:fs';
import type { Patch, PatchFile } from '../graph/workspace.js';
import { type GitScope, git, line } from './git.js';

type Scope = Omit<GitScope, 'workTree' | 'cwd'> & { readonly gitDir: string };

/**
 * Takes what a working copy holds as a patch: every file, tracked or new, deletions, modes and
 * binaries (what `.gitignore` ignores stays out), through an index of its own so the copy's own
 * index and HEAD are left as the node left them. The result is a commit on `start` with a fixed
 * author and date, kept by `refs/waymark/patches/<commit>`: the same files on the same start
 * always make the same commit. A copy left as it started is `start` itself.
 *
 * @example
 * const patch = await capturePatch(scope, path, start, base);
 */
export async function capturePatch(
  scope: Scope,
  path: string,
  start: string,
  base: string,
): Promise<Patch> {
  const index = `${path}.index`;
  const env = { GIT_INDEX_FILE: index };
  let tree: string;
  try {
    rmSync(index, { force: true });
    await git(scope, ['read-tree', start], { env });
    await git({ ...scope, workTree: path }, ['add', '--all', '--', '.'], { env });
    tree = line(await git(scope, ['write-tree'], { env }));
  } finally {
    rmSync(index, { force: true });
  }
  const startTree = line(await git(scope, ['rev-parse', `${start}^{tree}`]));
  const commit =
    tree === startTree
      ? start
      : line(await git(scope, ['commit-tree', tree, '-p', start, '-m', 'waymark patch']));
  if (commit !== start) await keep(scope, commit);
  return { base, commit, tree, files: await changedFiles(scope, base, commit) };
}

/**
 * Keeps `commit` (and so its tree and blobs) from git's garbage collection: a run that waits a
 * month for a person still finds its branches' patches.
 *
 * @example
 * await keep(scope, merged);
 */
export async function keep(scope: Scope, commit: string): Promise<void> {
  await git(scope, ['update-ref', `refs/waymark/patches/${commit}`, commit]);
}

const statuses: Readonly<Record<string, PatchFile['status']>> = {
  A: 'added',
  M: 'modified',
  D: 'deleted',
  R: 'renamed',
  C: 'copied',
  T: 'type-changed',
};

/**
 * The files that differ between two commits, with renames found, in path order.
 *
 * @example
 * await changedFiles(scope, base, commit) // [{ path: 'src/a.js', status: 'modified' }]
 */
export async function changedFiles(scope: Scope, from: string, to: string): Promise<PatchFile[]> {
  if (from === to) return [];
  const out = await git(scope, [
    'diff-tree',
    '-r',
    '-z',
    '--no-commit-id',
    '--name-status',
    '-M',
    from,
    to,
  ]);
  const parts = out.stdout.split('\0');
  const files: PatchFile[] = [];
  for (let i = 0; i < parts.length && parts[i] !== ''; ) {
    const letter = parts[i]![0]!;
    const status = statuses[letter] ?? 'modified';
    if (letter === 'R' || letter === 'C') {
      files.push({ path: parts[i + 2]!, status, from: parts[i + 1]! });
      i += 3;
    } else {
      files.push({ path: parts[i + 1]!, status });
      i += 2;
    }
  }
  return files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}
