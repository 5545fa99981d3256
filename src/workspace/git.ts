import { execProcess } from '../effects/exec.js';
import { WaymarkError } from '../error/waymark-error.js';

/** Where a git command runs: a repository's git directory, and the work tree it acts on. */
export interface GitScope {
  /**
   * The repository's git directory (for a worktree: the common one, where objects live).
   * Absent only to ask git where a directory's repository is.
   */
  readonly gitDir?: string;
  /** Where to ask, when `gitDir` is absent. */
  readonly cwd?: string;
  /** The work tree, for commands that read or write files; absent for object-only commands. */
  readonly workTree?: string;
  /** Stops the command (SIGTERM, then SIGKILL) when it aborts: the attempt's signal. */
  readonly signal: AbortSignal;
  /** The node the command runs for, named in errors. */
  readonly node: string;
}

/** What a git command printed, and how it exited (0 is not assumed: merge-tree exits 1 on conflicts). */
export interface GitResult {
  readonly exitCode: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

// The same committer for every commit waymark writes, at a fixed date: a patch's commit id then
// depends only on its tree and parents, so the same result always has the same id.
const identity = {
  GIT_AUTHOR_NAME: 'waymark',
  GIT_AUTHOR_EMAIL: 'waymark@localhost',
  GIT_AUTHOR_DATE: '@0 +0000',
  GIT_COMMITTER_NAME: 'waymark',
  GIT_COMMITTER_EMAIL: 'waymark@localhost',
  GIT_COMMITTER_DATE: '@0 +0000',
};

// Settings no user configuration may change under us: hooks never run (a post-checkout hook of
// the repository would run in every workspace), no pager, no GC while a run holds loose objects,
// and conflicts show the base (diff3) so a hunk says what both sides changed.
const settings = [
  '-c',
  'core.hooksPath=/dev/null',
  '-c',
  'gc.auto=0',
  '-c',
  'merge.conflictStyle=diff3',
  '-c',
  'core.quotePath=false',
];

/**
 * Runs git with `args` through the argv-only process runner (no shell, the minimal environment),
 * with the repository and work tree named explicitly, so no variable or cwd can point it
 * elsewhere. Resolves with the exit code for `accept`ed codes (default only 0).
 * @throws WaymarkError `WORKSPACE_FAILED` when git exits with another code or cannot start.
 *
 * @example
 * const { stdout } = await git({ gitDir, signal, node: 'fix' }, ['rev-parse', 'HEAD']);
 */
export async function git(
  scope: GitScope,
  args: readonly string[],
  options: {
    readonly env?: Readonly<Record<string, string>>;
    readonly input?: string;
    readonly accept?: readonly number[];
  } = {},
): Promise<GitResult> {
  const where = [
    ...(scope.gitDir !== undefined ? ['--git-dir', scope.gitDir] : []),
    ...(scope.workTree !== undefined ? ['--work-tree', scope.workTree] : []),
  ];
  const cwd = scope.workTree ?? scope.cwd;
  const argv = ['git', ...settings, ...where, ...args];
  let result: Awaited<ReturnType<typeof execProcess>>;
  try {
    result = await execProcess(
      argv,
      {
        ...(cwd !== undefined && { cwd }),
        env: { ...identity, GIT_TERMINAL_PROMPT: '0', ...options.env },
        maxOutputBytes: 64 * 1024 * 1024,
        ...(options.input !== undefined && { input: options.input }),
      },
      { node: scope.node, allow: ['git'], signal: scope.signal },
    );
  } catch (cause) {
    // Aborted with the attempt: that is the attempt's outcome, not a workspace failure.
    if ((cause as { code?: unknown }).code === 'EXEC_ABORTED') throw cause;
    throw new WaymarkError(
      'WORKSPACE_FAILED',
      `node "${scope.node}": git ${args[0]} could not run: ${(cause as Error).message}`,
      { cause, details: { command: args[0] ?? '' } },
    );
  }
  const accept = options.accept ?? [0];
  if (result.exitCode === null || !accept.includes(result.exitCode)) {
    const said = result.stderr.trim().split('\n').slice(-3).join(' ');
    throw new WaymarkError(
      'WORKSPACE_FAILED',
      `node "${scope.node}": git ${args[0]} failed (exit ${result.exitCode ?? result.signal}): ${said}`,
      { details: { command: args[0] ?? '', exitCode: result.exitCode, stderr: said } },
    );
  }
  return result;
}

/**
 * The first line git printed: an object id, a path.
 *
 * @example
 * const tree = line(await git(scope, ['write-tree']));
 */
export function line(result: GitResult): string {
  return result.stdout.split('\n')[0]!.trim();
}
