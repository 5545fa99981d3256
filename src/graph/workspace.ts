import { z } from 'zod';

/**
 * Where a node works on files, as data: each activation gets its own working copy of `repo` (a
 * git worktree, or a copy of a directory that is not a git repository) at a recorded commit,
 * and its update carries what it changed there as a {@link Patch} in state field `patch`.
 *
 * @example
 * .node('fix-code', fix, { workspace: { repo: '/src/app', base: 'main', patch: 'code' } })
 */
export interface WorkspaceDef {
  /** The repository: a path, absolute or relative to the process's working directory. */
  readonly repo: string;
  /**
   * The revision to start from when field `patch` holds no patch yet: `HEAD` by default. It is
   * resolved to a commit the first time the run needs it and recorded, so every branch and every
   * resume of the run starts from the same commit.
   */
  readonly base?: string;
  /** The state field the activation's patch is written to, and a later workspace starts from. */
  readonly patch: string;
  /** How long the working copy of a failed attempt is kept for inspection; default one day. */
  readonly keepFailedMs?: number;
}

/** One file a patch changes: its path, and what happened to it (`from`: a rename's old path). */
export interface PatchFile {
  readonly path: string;
  readonly status: 'added' | 'modified' | 'deleted' | 'renamed' | 'copied' | 'type-changed';
  readonly from?: string;
}

/**
 * What a workspace node changed, as an immutable, content-addressed record: the commit `commit`
 * (its tree is the whole result, `tree`) sits on the recorded `base`, in the repository's own
 * object store, kept by the ref `refs/waymark/patches/<commit>`. The same result always has the
 * same ids. State holds this record, never the files.
 *
 * @example
 * const { base, commit, files } = s.code; // git diff base commit shows the change
 */
export interface Patch {
  /** The commit the run's work started from (the recorded base). */
  readonly base: string;
  /** The result: a commit whose tree holds every file as the activation left it. */
  readonly commit: string;
  readonly tree: string;
  /** The files that differ between `base` and `commit`, by path. */
  readonly files: readonly PatchFile[];
}

const sha = z.string().regex(/^[0-9a-f]{40}([0-9a-f]{24})?$/, 'a full git object id');

/**
 * The zod schema of a {@link Patch}.
 *
 * @example
 * patchSchema.parse(s.code);
 */
export const patchSchema = z.object({
  base: sha,
  commit: sha,
  tree: sha,
  files: z.array(
    z.object({
      path: z.string(),
      status: z.enum(['added', 'modified', 'deleted', 'renamed', 'copied', 'type-changed']),
      from: z.string().optional(),
    }),
  ),
});

/**
 * The schema of a state field that holds a workspace's patch: a {@link Patch}, or null before
 * any workspace node ran.
 *
 * @example
 * const State = z.object({ bug: z.string(), code: workspacePatch() });
 */
export function workspacePatch() {
  return patchSchema.nullable().default(null);
}
