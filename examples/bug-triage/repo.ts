import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fixturesDir } from './graph.js';

/**
 * A real git repository holding the example's project (the bundled fixtures), in a fresh temp
 * directory with one commit on `main`: what the workspace variant of bug-triage works on, as a
 * team's checkout would be.
 *
 * @example
 * const repo = makeBugRepo();
 * await run(bugTriageInRepo({ repo }), { bug: 'search-pagination' });
 */
export function makeBugRepo(): string {
  const dir = mkdtempSync(join(tmpdir(), 'bug-triage-repo-'));
  cpSync(fixturesDir, dir, { recursive: true });
  const git = (...args: string[]) =>
    execFileSync('git', ['-c', 'user.name=bug-triage', '-c', 'user.email=bug@localhost', ...args], {
      cwd: dir,
      stdio: 'ignore',
    });
  git('init', '--quiet', '--initial-branch=main');
  git('add', '--all');
  git('commit', '--quiet', '-m', 'the shop, with its bugs');
  return dir;
}
