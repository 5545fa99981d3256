import { type ChildProcess, spawn } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { bin, fixture, sandbox, testTimeoutMs } from '../cli/support.js';

// `waymark serve` and `waymark ui` as a shell or npm starts them: a warning when the API listens
// beyond this machine, and no server left behind when npm, which started it, is gone.

/** What a child wrote so far, and a way to wait for a piece of it. */
function outputOf(child: ChildProcess) {
  const seen = { stdout: '', stderr: '' };
  const waiters: (() => void)[] = [];
  const told = () => {
    for (const w of waiters.splice(0)) w();
  };
  child.stdout!.on('data', (chunk: Buffer) => {
    seen.stdout += chunk.toString();
    told();
  });
  child.stderr!.on('data', (chunk: Buffer) => {
    seen.stderr += chunk.toString();
    told();
  });
  return {
    seen,
    async until(text: string): Promise<void> {
      while (!seen.stdout.includes(text)) {
        if (child.exitCode !== null) throw new Error(`exited before "${text}":\n${seen.stderr}`);
        await new Promise<void>((resolve) => waiters.push(resolve));
      }
    },
  };
}

const exited = (child: ChildProcess) =>
  new Promise<number | null>((resolve) => {
    if (child.exitCode !== null) resolve(child.exitCode);
    else child.once('exit', (code) => resolve(code));
  });

/** Whether a process of this pid is still there. */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function until(check: () => boolean, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (check()) return true;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return check();
}

const { npm_command: _npm, ...plainEnv } = process.env;

// A server a failing test left behind is stopped, never left running on the machine.
const servers: number[] = [];
afterEach(() => {
  for (const pid of servers.splice(0)) if (alive(pid)) process.kill(pid, 'SIGKILL');
});

describe('waymark serve, started by a person or by npm', { timeout: testTimeoutMs }, () => {
  it('warns on stderr when --host 0.0.0.0 opens the API to every network interface', async () => {
    const box = sandbox();
    const args = ['--db', box.db, 'serve', '--graphs', fixture('review.ts')];
    const wide = spawn(process.execPath, [bin, ...args, '--host', '0.0.0.0'], {
      cwd: box.dir,
      env: { ...plainEnv, NO_COLOR: '1' },
    });
    servers.push(wide.pid!);
    const wideOut = outputOf(wide);
    await wideOut.until('SIGTERM or Ctrl-C stops it');
    wide.kill('SIGTERM');
    expect(await exited(wide)).toBe(0);
    expect(wideOut.seen.stdout).toContain('at http://0.0.0.0:');
    expect(wideOut.seen.stderr).toContain(
      'warning: --host 0.0.0.0 listens on every network interface: whoever can reach this machine can call the API with the token',
    );

    const local = spawn(process.execPath, [bin, ...args], {
      cwd: box.dir,
      env: { ...plainEnv, NO_COLOR: '1' },
    });
    servers.push(local.pid!);
    const localOut = outputOf(local);
    await localOut.until('SIGTERM or Ctrl-C stops it');
    local.kill('SIGTERM');
    expect(await exited(local)).toBe(0);
    expect(localOut.seen.stderr).toBe('');
  });

  it.each(['serve', 'ui'])(
    '%s started by npm stops when npm is gone; started by a shell, it outlives it',
    async (command) => {
      const box = sandbox();
      const args = [bin, '--db', box.db, command, '--graphs', fixture('review.ts')];
      if (command === 'ui') args.push('--no-open');
      // What npx does: npm runs the command in `sh -c`, and a kill of npm ends that shell, not
      // the command. `; true` keeps the shell from handing its process to the command (exec).
      const script = `"${process.execPath}" ${args.map((a) => `"${a}"`).join(' ')} & echo "pid $!"; wait; true`;
      const started = async (env: NodeJS.ProcessEnv) => {
        const shell = spawn('sh', ['-c', script], { cwd: box.dir, env: { ...env, NO_COLOR: '1' } });
        const out = outputOf(shell);
        await out.until('SIGTERM or Ctrl-C stops it');
        const pid = Number(/^pid (\d+)$/m.exec(out.seen.stdout)![1]);
        servers.push(pid);
        shell.kill('SIGTERM');
        await exited(shell);
        return { pid, out };
      };

      const underNpm = await started({ ...plainEnv, npm_command: 'exec' });
      expect(await until(() => !alive(underNpm.pid), 10_000)).toBe(true);
      expect(underNpm.out.seen.stderr).toContain(
        `the process that started waymark ${command} is gone: stopping`,
      );

      const underShell = await started(plainEnv);
      // Given the time the one under npm took, and more: it is still serving.
      await new Promise((resolve) => setTimeout(resolve, 2500));
      expect(alive(underShell.pid)).toBe(true);
      process.kill(underShell.pid, 'SIGTERM');
      expect(await until(() => !alive(underShell.pid), 10_000)).toBe(true);
    },
  );
});

describe('a run waymark serve started, from the command line', { timeout: testTimeoutMs }, () => {
  it('is answered and shown with no --graph: the server records its graph file, as `waymark run` does', async () => {
    const box = sandbox();
    const server = spawn(
      process.execPath,
      [bin, '--db', box.db, 'serve', '--graphs', fixture('review.ts'), '--port', '0'],
      { cwd: box.dir, env: { ...plainEnv, NO_COLOR: '1', WAYMARK_TOKEN: 'secret-token' } },
    );
    servers.push(server.pid!);
    const out = outputOf(server);
    await out.until('SIGTERM or Ctrl-C stops it');
    const url = /at (http:\/\/127\.0\.0\.1:\d+)/.exec(out.seen.stdout)![1]!;
    const started = await fetch(`${url}/runs`, {
      method: 'POST',
      headers: { authorization: 'Bearer secret-token', 'content-type': 'application/json' },
      body: JSON.stringify({ graph: 'review', input: { title: 'T' }, runId: 'served' }),
    });
    expect(started.status).toBe(202);
    const status = async () =>
      (await (
        await fetch(`${url}/runs/served`, { headers: { authorization: 'Bearer secret-token' } })
      ).json()) as { status?: string; run?: { status?: string } };
    for (let i = 0; i < 100; i++) {
      const body = await status();
      if ((body.status ?? body.run?.status) === 'waiting') break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }

    // The answer resumes the run here, to its next person: it waits again (exit 3).
    const approved = await box.waymark(['approve', 'served']);
    expect(approved.code, approved.stderr).toBe(3);
    expect(approved.stderr).not.toMatch(/--graph/);
    const shown = await box.waymark(['show', 'served']);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toMatch(/answered review by cli/);
    server.kill('SIGTERM');
    expect(await exited(server)).toBe(0);
  });
});
