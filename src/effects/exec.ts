import { type ChildProcess, spawn } from 'node:child_process';
import { WaymarkError } from '../error/waymark-error.js';

// The same shapes as ExecOptions and ExecResult in graph/types.ts, which this layer may not
// import; the runtime's context implements NodeContext with these, so the compiler keeps them equal.

/** Options of a process run: see `ExecOptions` in graph/types.ts for each field. */
export interface ExecOptions {
  readonly cwd?: string;
  readonly env?: Readonly<Record<string, string | undefined>>;
  readonly timeoutMs?: number;
  readonly input?: string | Uint8Array;
  readonly maxOutputBytes?: number;
}

/** How a process ended: see `ExecResult` in graph/types.ts for each field. */
export interface ExecResult {
  readonly exitCode: number | null;
  readonly signal: string | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly truncated: boolean;
}

/** Who asks to run a process: the node (for messages), its allowlist and its attempt's signal. */
export interface ExecScope {
  readonly node: string;
  /** The node's `exec` option; undefined when it declared none, which allows nothing. */
  readonly allow: readonly string[] | undefined;
  readonly signal: AbortSignal;
}

/** Default of `maxOutputBytes`: 1 MiB of stdout and 1 MiB of stderr. */
export const defaultMaxOutputBytes = 1024 * 1024;

// SIGTERM first so a process can clean up (git leaves index.lock behind when killed outright);
// SIGKILL after this grace so a process that ignores SIGTERM cannot hold a cancel hostage.
const killGraceMs = 2_000;
const maxTimerMs = 2_147_483_647;

// What a program needs to find its tools, its home and its temp dir, and nothing else: the
// engine's environment usually holds model API keys and database URLs, which a process started
// from a node (with arguments a model may have written) has no business reading.
const inherited = [
  'PATH',
  'HOME',
  'USER',
  'LOGNAME',
  'LANG',
  'LC_ALL',
  'LC_CTYPE',
  'TZ',
  'TMPDIR',
  'TMP',
  'TEMP',
  // Windows cannot start most programs without these.
  'SYSTEMROOT',
  'WINDIR',
  'COMSPEC',
  'PATHEXT',
] as const;

/**
 * The environment a process gets by default: PATH, HOME, USER, LOGNAME, the locale, TZ, the temp
 * dir variables (and on Windows SYSTEMROOT, WINDIR, COMSPEC, PATHEXT), taken from `from`.
 *
 * @example
 * minimalEnv({ PATH: '/usr/bin', OPENAI_API_KEY: 'sk-...' }) // { PATH: '/usr/bin' }
 */
export function minimalEnv(
  from: Readonly<Record<string, string | undefined>> = process.env,
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of inherited) {
    const value = from[name];
    if (value !== undefined) env[name] = value;
  }
  return env;
}

/**
 * Whether `executable` (a process's argv[0]) is on an allowlist: listed as written, or, for a
 * path, its last segment is listed as a bare name (`'node'` allows `/usr/local/bin/node`).
 * A listed path allows that exact path only.
 *
 * @example
 * isExecAllowed('/usr/bin/git', ['node', 'git']) // true
 * isExecAllowed('rm', ['node', 'git'])           // false
 */
export function isExecAllowed(executable: string, allow: readonly string[]): boolean {
  if (allow.includes(executable)) return true;
  // Only '/' on POSIX, where a backslash is an ordinary character of a file name.
  const separator = process.platform === 'win32' ? /[\\/]/ : /\//;
  const name = executable.split(separator).at(-1) ?? '';
  return name !== '' && allow.includes(name);
}

/**
 * Runs a process without a shell: `argv[0]` is the program, every other element reaches it as
 * one argument, exactly as written (no globbing, no `$(...)`, no `;`). Refuses, before anything
 * starts, a program outside `scope.allow`. Kills the process (SIGTERM, then SIGKILL) at
 * `timeoutMs` or when `scope.signal` aborts.
 *
 * @example
 * const { exitCode, stdout } = await execProcess(['git', 'status', '--short'], { cwd: repo }, scope);
 */
export function execProcess(
  argv: readonly string[],
  options: ExecOptions,
  scope: ExecScope,
): Promise<ExecResult> {
  let checked: Checked;
  try {
    checked = check(argv, options ?? {}, scope);
  } catch (error) {
    return Promise.reject(error);
  }
  return start(checked, scope);
}

interface Checked {
  readonly argv: readonly string[];
  readonly cwd: string | undefined;
  readonly env: Record<string, string>;
  readonly timeoutMs: number | undefined;
  readonly input: string | Uint8Array | undefined;
  readonly maxOutputBytes: number;
}

function check(argv: readonly string[], options: ExecOptions, scope: ExecScope): Checked {
  const invalid = (message: string) =>
    new WaymarkError('EXEC_INVALID', `node "${scope.node}" called ctx.exec ${message}`, {
      retryable: false,
    });
  if (!Array.isArray(argv) || argv.length === 0)
    throw invalid('without an argv list; pass one such as ["git", "status"]');
  // A NUL cannot be passed to a program (C strings end at it); Node would throw mid-spawn.
  if (!argv.every((a) => typeof a === 'string' && !a.includes('\0')))
    throw invalid('with an argv element that is not a string, or that holds a NUL character');
  if (argv[0] === '') throw invalid('with an empty program name in argv[0]');
  const executable = argv[0]!;
  if (scope.allow === undefined || !isExecAllowed(executable, scope.allow)) {
    const why =
      scope.allow === undefined
        ? `it declares no exec allowlist; add exec: [${JSON.stringify(executable)}] to its options`
        : `its exec allowlist is ${JSON.stringify(scope.allow)}`;
    throw new WaymarkError(
      'EXEC_DENIED',
      `node "${scope.node}" may not run "${executable}": ${why}`,
      {
        retryable: false,
        details: { executable, allow: scope.allow ?? [] },
      },
    );
  }
  const { cwd, env, timeoutMs, input, maxOutputBytes = defaultMaxOutputBytes } = options;
  if (cwd !== undefined && (typeof cwd !== 'string' || cwd === ''))
    throw invalid(`with cwd = ${JSON.stringify(cwd)}; it must be a directory path`);
  if (
    timeoutMs !== undefined &&
    !(typeof timeoutMs === 'number' && timeoutMs > 0 && timeoutMs <= maxTimerMs)
  )
    throw invalid(`with timeoutMs = ${timeoutMs}; it must be > 0 and at most ${maxTimerMs}`);
  if (!(Number.isInteger(maxOutputBytes) && maxOutputBytes >= 0))
    throw invalid(`with maxOutputBytes = ${maxOutputBytes}; it must be a whole number >= 0`);
  if (input !== undefined && typeof input !== 'string' && !(input instanceof Uint8Array))
    throw invalid('with an input that is neither a string nor bytes');
  const merged = minimalEnv();
  for (const [name, value] of Object.entries(env ?? {})) {
    if (value === undefined) delete merged[name];
    else if (typeof value === 'string') merged[name] = value;
    else throw invalid(`with env.${name} that is not a string`);
  }
  return { argv, cwd, env: merged, timeoutMs, input, maxOutputBytes };
}

function start(checked: Checked, scope: ExecScope): Promise<ExecResult> {
  const { argv, timeoutMs } = checked;
  const executable = argv[0]!;
  const said = `node "${scope.node}" ran "${executable}"`;
  if (scope.signal.aborted) {
    return Promise.reject(
      new WaymarkError(
        'EXEC_ABORTED',
        `node "${scope.node}" asked to run "${executable}" after its attempt stopped`,
        {
          retryable: false,
          details: { executable },
        },
      ),
    );
  }
  return new Promise((resolve, reject) => {
    const stdout = capture(checked.maxOutputBytes);
    const stderr = capture(checked.maxOutputBytes);
    let stopped: 'timeout' | 'abort' | undefined;
    let settled = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let killer: ReturnType<typeof setTimeout> | undefined;

    const failed = (cause: NodeJS.ErrnoException) => {
      const where = checked.cwd === undefined ? '' : ` in ${JSON.stringify(checked.cwd)}`;
      const hint =
        cause.code === 'ENOENT'
          ? ': the program was not found on PATH, or the cwd does not exist'
          : `: ${cause.message}`;
      return new WaymarkError(
        'EXEC_FAILED',
        `node "${scope.node}" could not start "${executable}"${where}${hint}`,
        {
          retryable: false,
          details: { executable, errno: cause.code ?? null },
          cause,
        },
      );
    };
    let child: ChildProcess;
    try {
      child = spawn(executable, argv.slice(1), {
        shell: false,
        cwd: checked.cwd,
        env: checked.env,
        stdio: [checked.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
        windowsHide: true,
      });
    } catch (cause) {
      // Most start failures arrive as an 'error' event; a few (EACCES on some platforms) throw.
      reject(failed(cause as NodeJS.ErrnoException));
      return;
    }

    const finish = (outcome: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearTimeout(killer);
      scope.signal.removeEventListener('abort', onAbort);
      outcome();
    };
    const exited = () => child.exitCode !== null || child.signalCode !== null;
    // A grandchild that inherited the pipes can keep them open after the child is gone; once the
    // child was stopped, what it wrote so far is all the caller gets.
    const release = () => {
      child.stdout?.destroy();
      child.stderr?.destroy();
    };
    const stop = (why: 'timeout' | 'abort') => {
      if (stopped !== undefined || settled) return;
      stopped = why;
      child.kill('SIGTERM');
      killer = setTimeout(() => child.kill('SIGKILL'), killGraceMs);
      if (exited()) release();
    };
    const onAbort = () => stop('abort');

    child.stdout?.on('data', stdout.push);
    child.stderr?.on('data', stderr.push);
    child.on('exit', () => {
      if (stopped !== undefined) release();
    });
    child.on('error', (cause: NodeJS.ErrnoException) => {
      // After a successful start, 'error' only reports a failed kill; 'close' still settles.
      if (child.pid !== undefined) return;
      finish(() => reject(failed(cause)));
    });
    child.on('close', (exitCode: number | null, signal: NodeJS.Signals | null) => {
      finish(() => {
        if (stopped === 'timeout') {
          reject(
            new WaymarkError(
              'EXEC_TIMEOUT',
              `${said}, which did not end within ${timeoutMs} ms and was killed`,
              {
                errorClass: 'timeout',
                details: { executable, timeoutMs },
              },
            ),
          );
        } else if (stopped === 'abort') {
          reject(
            new WaymarkError(
              'EXEC_ABORTED',
              `${said}, which was killed because its attempt stopped`,
              {
                retryable: false,
                details: { executable },
                cause: scope.signal.reason,
              },
            ),
          );
        } else {
          resolve({
            exitCode,
            signal,
            stdout: stdout.text(),
            stderr: stderr.text(),
            truncated: stdout.truncated() || stderr.truncated(),
          });
        }
      });
    });

    if (child.stdin) {
      // A process may exit without reading its input; the broken pipe is not the caller's error.
      child.stdin.on('error', () => {});
      child.stdin.end(checked.input);
    }
    if (timeoutMs !== undefined) timer = setTimeout(() => stop('timeout'), timeoutMs);
    scope.signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** Keeps the first `cap` bytes of a stream and counts whether anything was dropped. */
function capture(cap: number) {
  const chunks: Buffer[] = [];
  let kept = 0;
  let dropped = false;
  return {
    push: (chunk: Buffer) => {
      const room = cap - kept;
      if (chunk.length > room) dropped = true;
      if (room <= 0) return;
      const part = chunk.length > room ? chunk.subarray(0, room) : chunk;
      chunks.push(part);
      kept += part.length;
    },
    // A cut inside a multi-byte character decodes to U+FFFD; the bytes before it are intact.
    text: () => Buffer.concat(chunks).toString('utf8'),
    truncated: () => dropped,
  };
}
