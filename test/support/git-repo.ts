import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

/**
 * Runs git in `dir` with a fixed identity, and returns what it printed (trimmed).
 *
 * @example
 * gitIn(repo, 'rev-parse', 'HEAD');
 */
export function gitIn(dir: string, ...args: string[]): string {
  return execFileSync('git', ['-c', 'user.name=test', '-c', 'user.email=test@localhost', ...args], {
    cwd: dir,
    encoding: 'utf8',
  }).trim();
}

/**
 * A real git repository in a fresh temp directory, with `files` committed on `main`.
 *
 * @example
 * const repo = makeRepo({ 'src/a.js': 'export const a = 1;\n' });
 */
export function makeRepo(
  files: Readonly<Record<string, string>>,
  prefix = 'waymark-repo-',
): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  gitIn(dir, 'init', '--quiet', '--initial-branch=main');
  writeFiles(dir, files);
  gitIn(dir, 'add', '--all');
  gitIn(dir, 'commit', '--quiet', '-m', 'first');
  return dir;
}

/** Writes `files` (path -> content) under `dir`, making folders as needed. */
export function writeFiles(dir: string, files: Readonly<Record<string, string>>): void {
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), content);
  }
}

/** What a commit holds at `path`, read from the repository's objects. */
export function fileAt(repo: string, commit: string, path: string): string {
  return execFileSync('git', ['cat-file', 'blob', `${commit}:${path}`], {
    cwd: repo,
    encoding: 'utf8',
  });
}
