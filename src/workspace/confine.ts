import { realpathSync } from 'node:fs';
import { isAbsolute, relative, resolve, sep } from 'node:path';
import { WaymarkError } from '../error/waymark-error.js';

/**
 * Whether `path` is `root` or inside it, by real path where the path exists (a symlink in the
 * workspace that points outside leads outside), lexically where it does not yet.
 *
 * @example
 * isInside('/ws/run-1/fix', '/ws/run-1/fix/src/a.js') // true
 */
export function isInside(root: string, path: string): boolean {
  const real = realOrLexical(path);
  const rel = relative(realOrLexical(root), real);
  return rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel));
}

function realOrLexical(path: string): string {
  // The nearest ancestor that exists, resolved, plus what does not exist yet.
  let head = resolve(path);
  const rest: string[] = [];
  for (;;) {
    try {
      return resolve(realpathSync(head), ...rest);
    } catch {
      const up = resolve(head, '..');
      if (up === head) return resolve(path);
      rest.unshift(head.slice(up.length + (up.endsWith(sep) ? 0 : 1)));
      head = up;
    }
  }
}

/**
 * `file`, relative to the workspace, as an absolute path inside it.
 * @throws WaymarkError `EXEC_OUTSIDE_WORKSPACE` when it leads outside.
 *
 * @example
 * inWorkspace('/ws/fix', 'src/a.js', 'fix') // '/ws/fix/src/a.js'
 */
export function inWorkspace(root: string, file: string, node: string): string {
  const target = resolve(root, file);
  if (typeof file !== 'string' || !isInside(root, target)) throw outside(node, root, file, 'path');
  return target;
}

// An argument names a path when it is absolute or climbs out with `..`, as itself or after a
// `--flag=` prefix: `../x`, `/etc/passwd`, `--output=/tmp/x`. Other arguments (`-n`, `src/a.js`,
// a URL, a message) are relative to the workspace or not paths at all.
function pathsIn(arg: string): string[] {
  const candidates = [arg];
  const eq = arg.indexOf('=');
  if (arg.startsWith('-') && eq > 0) candidates.push(arg.slice(eq + 1));
  return candidates.filter(
    (c) =>
      isAbsolute(c) ||
      c === '..' ||
      c.startsWith(`..${sep}`) ||
      c.includes(`${sep}..${sep}`) ||
      c.endsWith(`${sep}..`),
  );
}

/**
 * Holds a process of a workspace node to its working copy: the cwd is the workspace (a `cwd`
 * given must be inside it), and no argument may name a path outside it (argv[0], the program,
 * is found on PATH as usual). Returns the cwd to run in.
 * @throws WaymarkError `EXEC_OUTSIDE_WORKSPACE` naming the argument.
 *
 * @example
 * const cwd = confineExec('/ws/fix', ['node', 'test.js'], undefined, 'fix');
 */
export function confineExec(
  root: string,
  argv: readonly string[],
  cwd: string | undefined,
  node: string,
): string {
  const dir = cwd === undefined ? root : resolve(root, cwd);
  if (cwd !== undefined && (typeof cwd !== 'string' || !isInside(root, dir)))
    throw outside(node, root, String(cwd), 'cwd');
  if (Array.isArray(argv)) {
    for (const arg of argv.slice(1)) {
      if (typeof arg !== 'string') continue; // the process runner reports it
      for (const path of pathsIn(arg)) {
        if (!isInside(root, resolve(dir, path))) throw outside(node, root, arg, 'argument');
      }
    }
  }
  return dir;
}

function outside(node: string, root: string, what: string, kind: string): WaymarkError {
  return new WaymarkError(
    'EXEC_OUTSIDE_WORKSPACE',
    `node "${node}" names ${kind} ${JSON.stringify(what)}, outside its workspace ${root}`,
    { retryable: false, details: { [kind]: what, workspace: root } },
  );
}
