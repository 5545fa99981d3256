// Worktree administration (add, remove, prune) writes the repository's shared admin files, and
// parallel `worktree add`s are what coding agents trip over (docs/workspaces.md): one at a time
// per repository in this process. The agents themselves still work side by side.
const queues = new Map<string, Promise<unknown>>();

/**
 * Runs `fn` after every earlier call with the same key has settled.
 *
 * @example
 * await serially(gitDir, () => git(scope, ['worktree', 'prune']));
 */
export function serially<T>(key: string, fn: () => Promise<T>): Promise<T> {
  const before = queues.get(key) ?? Promise.resolve();
  const run = before.then(fn, fn);
  const settled = run.then(
    () => {},
    () => {},
  );
  queues.set(key, settled);
  void settled.then(() => {
    if (queues.get(key) === settled) queues.delete(key);
  });
  return run;
}
