import { createHash, randomUUID } from 'node:crypto';
import { mkdirSync, rmSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { WaymarkError } from '../error/waymark-error.js';
import { type GitScope, git, line } from './git.js';
import { serially } from './serially.js';

/**
 * A repository a workspace is made from: a git repository (its top-level directory and common
 * git directory), or a directory without git, whose files waymark snapshots into a private
 * bare repository under the workspaces' root so that it is handled exactly like one.
 */
export interface Repo {
  readonly kind: 'git' | 'directory';
  /** The directory as declared, resolved: what a patch of a directory-backed repo is taken from. */
  readonly dir: string;
  /** Where objects and worktrees are kept. */
  readonly gitDir: string;
}

/**
 * The repository at `path` (relative to the process's working directory).
 * @throws WaymarkError `WORKSPACE_REPO_INVALID` when it is not a directory.
 *
 * @example
 * const repo = await openRepo('.', root, { signal, node: 'fix' });
 */
export async function openRepo(
  path: string,
  root: string,
  scope: Omit<GitScope, 'gitDir' | 'workTree' | 'cwd'>,
): Promise<Repo> {
  const dir = resolve(path);
  let isDir = false;
  try {
    isDir = statSync(dir).isDirectory();
  } catch {}
  if (!isDir) {
    throw new WaymarkError(
      'WORKSPACE_REPO_INVALID',
      `node "${scope.node}" works in ${JSON.stringify(path)}, which is not a directory (resolved to ${dir})`,
      { retryable: false, details: { repo: path, resolved: dir } },
    );
  }
  const found = await git(
    { ...scope, cwd: dir },
    ['rev-parse', '--path-format=absolute', '--git-common-dir'],
    {
      accept: [0, 128],
    },
  );
  if (found.exitCode === 0) return { kind: 'git', dir, gitDir: line(found) };
  // Not a git repository: its own bare repository, named after the directory, made once.
  const id = createHash('sha256').update(dir).digest('hex').slice(0, 16);
  const gitDir = join(root, 'repos', `${id}.git`);
  await serially(gitDir, async () => {
    const made = await git({ ...scope, gitDir }, ['rev-parse', '--git-dir'], { accept: [0, 128] });
    if (made.exitCode === 0) return;
    rmSync(gitDir, { recursive: true, force: true });
    mkdirSync(gitDir, { recursive: true });
    await git({ ...scope, cwd: gitDir }, ['init', '--quiet', '--bare', gitDir]);
  });
  return { kind: 'directory', dir, gitDir };
}

/**
 * The commit `revision` names in a git repository; for a directory, a snapshot of its files as
 * they are now (ignoring what its `.gitignore` ignores), kept by `refs/waymark/bases/<commit>`.
 * @throws WaymarkError `WORKSPACE_BASE_UNKNOWN` when the revision names no commit.
 *
 * @example
 * const base = await resolveBase(repo, 'main', { signal, node: 'fix' });
 */
export async function resolveBase(
  repo: Repo,
  revision: string,
  scope: Omit<GitScope, 'gitDir' | 'workTree' | 'cwd'>,
): Promise<string> {
  const at = { ...scope, gitDir: repo.gitDir };
  if (repo.kind === 'directory') {
    if (revision !== 'HEAD') {
      throw new WaymarkError(
        'WORKSPACE_BASE_UNKNOWN',
        `node "${scope.node}" starts from ${JSON.stringify(revision)} in ${repo.dir}, which is not a git repository: it has only its files as they are (leave base out)`,
        { retryable: false, details: { repo: repo.dir, base: revision } },
      );
    }
    const index = `${repo.gitDir}/snapshot-${randomUUID()}.index`;
    try {
      const env = { GIT_INDEX_FILE: index };
      await git({ ...at, workTree: repo.dir }, ['add', '--all', '--', '.'], { env });
      const tree = line(await git(at, ['write-tree'], { env }));
      const commit = line(await git(at, ['commit-tree', tree, '-m', 'waymark base']));
      await git(at, ['update-ref', `refs/waymark/bases/${commit}`, commit]);
      return commit;
    } finally {
      rmSync(index, { force: true });
    }
  }
  const found = await git(
    at,
    ['rev-parse', '--verify', '--quiet', '--end-of-options', `${revision}^{commit}`],
    {
      accept: [0, 1, 128],
    },
  );
  if (found.exitCode !== 0) {
    throw new WaymarkError(
      'WORKSPACE_BASE_UNKNOWN',
      `node "${scope.node}" starts from ${JSON.stringify(revision)}, which names no commit in ${repo.dir}`,
      { retryable: false, details: { repo: repo.dir, base: revision } },
    );
  }
  return line(found);
}
