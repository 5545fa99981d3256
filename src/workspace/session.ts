import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { ExecOptions, ExecResult } from '../effects/exec.js';
import { type EffectLedger, performEffect } from '../effects/ledger.js';
import { WaymarkError } from '../error/waymark-error.js';
import type { Patch, WorkspaceDef } from '../graph/workspace.js';
import { patchSchema } from '../graph/workspace.js';
import { capturePatch } from './capture.js';
import { inWorkspace } from './confine.js';
import { git } from './git.js';
import { mergePatches } from './merge.js';
import { workspacePath, workspaceRoot } from './paths.js';
import { openRepo, type Repo, resolveBase } from './repo.js';
import { keepFailed, sweepWorkspaces } from './retention.js';
import { addWorktree, removeWorktree } from './worktree.js';

/** A failed attempt's working copy is kept this long by default: a day to look at it. */
export const defaultKeepFailedMs = 24 * 60 * 60 * 1000;

/** What opening an activation's working copy needs: who it is for, and where it starts. */
export interface WorkspaceInput {
  readonly runId: string;
  readonly activationId: string;
  readonly attempt: number;
  readonly node: string;
  /** The state the activation sees: its patch field says where a chain of nodes got to. */
  readonly state: Readonly<Record<string, unknown>>;
  /** In a `patches` join: each merged branch's index and patch, in branch order. */
  readonly join?: { readonly branches: readonly number[]; readonly patches: readonly unknown[] };
  readonly ledger: EffectLedger;
  readonly signal: AbortSignal;
  readonly now: () => number;
  /** The attempt's `ctx.exec`, which holds processes to the copy. */
  readonly exec: (argv: readonly string[], options?: ExecOptions) => Promise<ExecResult>;
  readonly root?: string;
}

/** An activation's working copy while its attempt runs, and what becomes of it after. */
export interface WorkspaceSession {
  readonly path: string;
  readonly base: string;
  readonly start: string;
  /** The attempt succeeded: its patch is taken, then the copy is removed. */
  finish(): Promise<Patch>;
  /** The attempt failed: the copy stays for inspection, until `keepFailedMs` from now. */
  fail(): Promise<void>;
}

/**
 * Makes the activation's working copy, fresh for every attempt: in a `patches` join, at the
 * merge of its branches' patches; after an earlier workspace node, at the patch in the node's
 * field; otherwise at the base revision, resolved once per run and recorded in the run's effect
 * ledger, so every branch and every resume starts from the same commit.
 * @throws WaymarkError `MERGE_CONFLICT`, `WORKSPACE_REPO_INVALID`, `WORKSPACE_BASE_UNKNOWN`,
 *   `WORKSPACE_FAILED`.
 *
 * @example
 * const session = await openWorkspace(node.def.workspace, input);
 */
export async function openWorkspace(
  def: WorkspaceDef,
  input: WorkspaceInput,
): Promise<WorkspaceSession> {
  const root = input.root ?? workspaceRoot();
  const who = { node: input.node, signal: input.signal };
  void sweepWorkspaces(root, input.now(), who);
  const repo = await openRepo(def.repo, root, who);
  const scope = { ...who, gitDir: repo.gitDir };
  const { base, start } = await startOf(def, input, repo);
  await known(scope, start, def, repo);
  const path = workspacePath(root, input.runId, input.activationId, input.attempt);
  await mkdir(dirname(path), { recursive: true });
  await addWorktree(scope, path, start);
  const keepMs = def.keepFailedMs ?? defaultKeepFailedMs;
  return {
    path,
    base,
    start,
    finish: async () => {
      const patch = await capturePatch(scope, path, start, base);
      await removeWorktree(scope, path);
      return patch;
    },
    fail: () => keepFailed(path, repo.gitDir, input.now() + keepMs),
  };
}

async function startOf(
  def: WorkspaceDef,
  input: WorkspaceInput,
  repo: Repo,
): Promise<{ readonly base: string; readonly start: string }> {
  const scope = { node: input.node, signal: input.signal, gitDir: repo.gitDir };
  if (input.join !== undefined) {
    const branches: [number, Patch][] = [];
    input.join.patches.forEach((p, i) => {
      const parsed = patchSchema.safeParse(p);
      if (parsed.success) branches.push([input.join!.branches[i] ?? i, parsed.data as Patch]);
    });
    if (branches.length > 0) {
      const merged = await mergePatches(scope, branches);
      if (!merged.ok) {
        const paths = [...new Set(merged.conflicts.map((c) => c.path))];
        throw new WaymarkError(
          'MERGE_CONFLICT',
          `join "${input.node}" cannot merge its branches' patches: ${paths.length} file(s) conflict (${paths.join(', ')})`,
          {
            retryable: false,
            details: { conflicts: merged.conflicts, patches: input.join.patches },
          },
        );
      }
      return { base: merged.patch.base, start: merged.patch.commit };
    }
  }
  const recorded = patchSchema.safeParse(input.state[def.patch]);
  if (recorded.success) return { base: recorded.data.base, start: recorded.data.commit };
  const revision = def.base ?? 'HEAD';
  // Once per run, whichever branch asks first: the ledger keeps the first answer.
  const key = `${input.runId}/workspace/${def.repo}@${revision}`;
  const base = await performEffect(input.ledger, key, () => resolveBase(repo, revision, scope));
  return { base, start: base };
}

// A patch from another repository (a changed `repo`, a state copied between runs) names a
// commit this one does not have: refused before a worktree is made of nothing.
async function known(
  scope: { readonly node: string; readonly signal: AbortSignal; readonly gitDir: string },
  commit: string,
  def: WorkspaceDef,
  repo: Repo,
): Promise<void> {
  const found = await git(scope, ['cat-file', '-e', `${commit}^{commit}`], { accept: [0, 1, 128] });
  if (found.exitCode === 0) return;
  throw new WaymarkError(
    'WORKSPACE_BASE_UNKNOWN',
    `node "${scope.node}" starts from commit ${commit}, which ${repo.dir} does not have (field "${def.patch}" holds a patch of another repository?)`,
    { retryable: false, details: { repo: repo.dir, commit } },
  );
}

/**
 * `ctx.workspace` over a session: file helpers held to the copy, and the attempt's `ctx.exec`.
 *
 * @example
 * const ws = workspaceHandle(session, ctx.exec, 'fix');
 */
export function workspaceHandle(
  session: Pick<WorkspaceSession, 'path' | 'base' | 'start'>,
  exec: WorkspaceInput['exec'],
  node: string,
) {
  const { path, base, start } = session;
  return {
    path,
    base,
    start,
    resolve: (file: string) => inWorkspace(path, file, node),
    read: (file: string) => readFile(inWorkspace(path, file, node), 'utf8'),
    write: async (file: string, content: string | Uint8Array) => {
      const target = inWorkspace(path, file, node);
      await mkdir(dirname(target), { recursive: true });
      await writeFile(target, content);
    },
    remove: (file: string) => rm(inWorkspace(path, file, node), { recursive: true, force: true }),
    exec,
  };
}
