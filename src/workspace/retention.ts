import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runDir, workspaceRoot } from './paths.js';
import { removeWorktree, worktreeRepo } from './worktree.js';

/** Kept-for-inspection marks are swept at most this often per process. */
const sweepEveryMs = 60_000;
let lastSweep = Number.NEGATIVE_INFINITY;

/**
 * Marks a failed attempt's working copy as kept until `until` (ms since the epoch), beside it,
 * so a later sweep knows which repository it belongs to and when it may go.
 *
 * @example
 * await keepFailed(path, gitDir, now + 86_400_000);
 */
export async function keepFailed(path: string, gitDir: string, until: number): Promise<void> {
  writeFileSync(`${path}.kept.json`, `${JSON.stringify({ path, gitDir, until })}\n`);
}

/**
 * Removes the kept working copies whose time is up, under `root`; at most once a minute per
 * process, and never in the way of the attempt that calls it (failures are left for the next).
 *
 * @example
 * await sweepWorkspaces(root, clock.now(), { node: 'fix', signal });
 */
export async function sweepWorkspaces(
  root: string,
  now: number,
  who: { readonly node: string; readonly signal: AbortSignal },
): Promise<void> {
  if (now - lastSweep < sweepEveryMs) return;
  lastSweep = now;
  const runs = join(root, 'runs');
  let dirs: string[];
  try {
    dirs = readdirSync(runs);
  } catch {
    return;
  }
  for (const run of dirs) {
    let names: string[];
    try {
      names = readdirSync(join(runs, run));
    } catch {
      continue;
    }
    for (const name of names.filter((n) => n.endsWith('.kept.json'))) {
      const mark = join(runs, run, name);
      try {
        const { path, gitDir, until } = JSON.parse(readFileSync(mark, 'utf8'));
        if (typeof until !== 'number' || until > now) continue;
        await removeWorktree({ ...who, gitDir }, path);
        rmSync(mark, { force: true });
      } catch {}
    }
  }
}

/**
 * Removes every working copy of a run that ended, kept ones included, unless it ended failed or
 * timed out: then they stay for inspection until their `keepFailedMs` is up. For the host that
 * sees the run end (docs/workspaces.md).
 *
 * @example
 * await endRunWorkspaces(snapshot.runId, snapshot.status);
 */
export async function endRunWorkspaces(
  runId: string,
  status: string,
  root: string = workspaceRoot(),
): Promise<void> {
  if (status !== 'succeeded' && status !== 'cancelled') return;
  const dir = runDir(root, runId);
  const who = { node: '(run end)', signal: new AbortController().signal };
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) {
    const path = join(dir, name);
    if (name.endsWith('.json') || name.endsWith('.index')) continue;
    const gitDir = worktreeRepo(path);
    if (gitDir !== undefined) await removeWorktree({ ...who, gitDir }, path).catch(() => {});
  }
  rmSync(dir, { recursive: true, force: true });
}
