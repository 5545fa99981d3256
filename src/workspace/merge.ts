import type { Patch } from '../graph/workspace.js';
import { changedFiles, keep } from './capture.js';
import { type ConflictHunk, hunksOf, parseMergeTree } from './conflicts.js';
import { type GitScope, git, line } from './git.js';

type Scope = Omit<GitScope, 'workTree' | 'cwd'> & { readonly gitDir: string };

/** A path two branches changed in ways git's three-way merge cannot reconcile. */
export interface MergeConflict {
  readonly path: string;
  /** Git's conflict type: `contents`, `modify/delete`, `add/add`, `rename/delete`, `binary`... */
  readonly type: string;
  /** The branch that could not be merged (its index in the fan-out). */
  readonly branch: number;
  /** The branches merged before it that changed the same path. */
  readonly with: readonly number[];
  /** For a conflict in a text file's contents: each conflicting region, with its three sides. */
  readonly hunks: readonly ConflictHunk[];
}

/** What merging a join's branch patches gave: one commit, or the conflicts that stop it. */
export type MergeResult =
  | { readonly ok: true; readonly patch: Patch }
  | { readonly ok: false; readonly conflicts: readonly MergeConflict[] };

/**
 * Merges the branches' patches (`[branch index, patch]`, in branch order) three-way with git's
 * merge machinery (`merge-tree --write-tree`: merge-ort, renames found, no checkout), folding
 * them in that order from their common base, so the result never depends on which branch
 * finished first. A branch that conflicts with what was merged before it is left out and its
 * conflicts reported; the later branches are still tried, so one result lists every conflict.
 *
 * @example
 * const merged = await mergePatches(scope, [[0, fix], [1, tests]]);
 */
export async function mergePatches(
  scope: Scope,
  branches: readonly (readonly [number, Patch])[],
): Promise<MergeResult> {
  const [first, ...rest] = branches;
  if (first === undefined) throw new Error('mergePatches needs at least one patch');
  let acc = first[1].commit;
  const merged: [number, Patch][] = [[first[0], first[1]]];
  const conflicts: MergeConflict[] = [];
  for (const [index, patch] of rest) {
    if (patch.commit === acc) continue;
    const out = await git(scope, ['merge-tree', '--write-tree', '-z', acc, patch.commit], {
      accept: [0, 1],
    });
    const parsed = parseMergeTree(out.stdout);
    if (out.exitCode === 0) {
      const commit = line(
        await git(scope, [
          'commit-tree',
          parsed.tree,
          '-p',
          acc,
          '-p',
          patch.commit,
          '-m',
          'waymark merge',
        ]),
      );
      acc = commit;
      merged.push([index, patch]);
      continue;
    }
    for (const c of parsed.conflicts) {
      const hunks = c.type === 'contents' ? await hunksAt(scope, parsed.tree, c.path) : [];
      const touched = merged.filter(([, p]) =>
        p.files.some((f) => f.path === c.path || f.from === c.path),
      );
      conflicts.push({
        path: c.path,
        type: c.type,
        branch: index,
        with: touched.map(([i]) => i),
        hunks,
      });
    }
  }
  if (conflicts.length > 0) return { ok: false, conflicts };
  await keep(scope, acc);
  const base = first[1].base;
  const tree = line(await git(scope, ['rev-parse', `${acc}^{tree}`]));
  return {
    ok: true,
    patch: { base, commit: acc, tree, files: await changedFiles(scope, base, acc) },
  };
}

// The conflicted file as merge-tree wrote it into its tree, with markers: a binary is skipped.
async function hunksAt(scope: Scope, tree: string, path: string): Promise<ConflictHunk[]> {
  const blob = await git(scope, ['cat-file', 'blob', `${tree}:${path}`], { accept: [0, 128] });
  if (blob.exitCode !== 0 || blob.stdout.includes('\0')) return [];
  return hunksOf(blob.stdout);
}
