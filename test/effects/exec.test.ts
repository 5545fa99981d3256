import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { execProcess } from '../../src/effects/exec.js';
import { END, type ExecResult, graph, type NodeContext, run } from '../../src/index.js';

const State = z.object({ out: z.string().default('') });

/** A one-node graph whose node runs `body` with the given `exec` allowlist and keeps its result. */
function oneNode(
  body: (ctx: NodeContext) => Promise<unknown>,
  options: { exec?: readonly string[]; timeoutMs?: number } = {},
) {
  return graph('exec', { state: State })
    .node('work', async (_s, ctx) => ({ out: JSON.stringify(await body(ctx)) }), options)
    .edge('work', END)
    .entry('work')
    .compile();
}

const resultOf = (out: string) => JSON.parse(out) as ExecResult;

/** True while a process with this pid exists (signal 0 checks without sending anything). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Polls until `condition` holds; the bound is generous, it only stops a hang. */
async function eventually(condition: () => boolean, what: string): Promise<void> {
  for (let waited = 0; !condition(); waited += 20) {
    if (waited > 10_000) throw new Error(`still waiting for ${what} after 10 s`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

// A node script that records its pid in the cwd, then waits a minute: a process that hangs.
const hang = "require('fs').writeFileSync('pid', String(process.pid)); setTimeout(() => {}, 60000)";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'waymark-exec-'));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe('ctx.exec', () => {
  it('runs an allowed program and returns its exit code and output; a non-zero exit is a result, not an error', async () => {
    const g = graph('exec', { state: State })
      .node(
        'reproduce',
        async (_s, ctx) => {
          const result = await ctx.exec([
            'node',
            '-e',
            "console.log('out'); console.error('err'); process.exit(3)",
          ]);
          return { out: JSON.stringify(result) };
        },
        { exec: ['node'] },
      )
      .edge('reproduce', END)
      .entry('reproduce')
      .compile();

    const result = await run(g, {});

    expect(result.status).toBe('succeeded');
    expect(resultOf(result.state.out)).toEqual({
      exitCode: 3,
      signal: null,
      stdout: 'out\n',
      stderr: 'err\n',
      truncated: false,
    });
  });

  it('passes every argv element to the program literally: no shell sees "; rm -rf /", "$(...)" or backticks', async () => {
    const hostile = [
      '; rm -rf /',
      '$(touch pwned)',
      '`touch pwned2`',
      '*',
      '| cat',
      '&& touch pwned3',
    ];
    const g = oneNode(
      (ctx) =>
        ctx.exec(['node', '-e', 'console.log(JSON.stringify(process.argv.slice(1)))', ...hostile], {
          cwd: dir,
        }),
      { exec: ['node'] },
    );

    const result = await run(g, {});

    const { exitCode, stdout } = resultOf(result.state.out);
    expect(exitCode).toBe(0);
    expect(JSON.parse(stdout)).toEqual(hostile);
    expect(readdirSync(dir)).toEqual([]);
    expect(existsSync(join(dir, 'pwned'))).toBe(false);
    expect(existsSync(join(dir, 'pwned2'))).toBe(false);
  });

  it("refuses a program outside the node's allowlist with EXEC_DENIED, before anything starts", async () => {
    // `node` exists and would create the file; the allowlist names only git.
    const g = oneNode(
      (ctx) => ctx.exec(['node', '-e', "require('fs').writeFileSync('started', '')"], { cwd: dir }),
      { exec: ['git'] },
    );

    const result = await run(g, {});

    expect(result.status).toBe('failed');
    expect(result.errors[0]).toMatchObject({
      code: 'EXEC_DENIED',
      class: 'permanent',
      details: { executable: 'node', allow: ['git'] },
    });
    expect(readdirSync(dir)).toEqual([]);
  });

  it('refuses every program to a node that declares no exec allowlist', async () => {
    const g = oneNode((ctx) => ctx.exec(['node', '-e', '']));

    const result = await run(g, {});

    expect(result.errors[0]?.code).toBe('EXEC_DENIED');
    expect(result.errors[0]?.message).toContain('declares no exec allowlist');
  });

  it('matches a path by its last segment against a listed name, and a listed path only exactly', async () => {
    const byName = oneNode((ctx) => ctx.exec([process.execPath, '-e', 'console.log(1)']), {
      exec: ['node'],
    });
    const lookalike = oneNode((ctx) => ctx.exec(['node-evil', '-e', '']), { exec: ['node'] });
    const otherPath = oneNode((ctx) => ctx.exec(['node', '-e', '']), {
      exec: [process.execPath],
    });

    expect(resultOf((await run(byName, {})).state.out).stdout).toBe('1\n');
    expect((await run(lookalike, {})).errors[0]?.code).toBe('EXEC_DENIED');
    expect((await run(otherPath, {})).errors[0]?.code).toBe('EXEC_DENIED');
  });

  it('kills a process that outlives its timeoutMs and rejects with EXEC_TIMEOUT once it is gone', async () => {
    const g = oneNode((ctx) => ctx.exec(['node', '-e', hang], { cwd: dir, timeoutMs: 200 }), {
      exec: ['node'],
    });

    const result = await run(g, {});

    expect(result.status).toBe('failed');
    expect(result.errors[0]).toMatchObject({
      code: 'EXEC_TIMEOUT',
      class: 'timeout',
      details: { executable: 'node', timeoutMs: 200 },
    });
    // On a loaded machine node may not reach its script within 200 ms; then there is no pid to
    // look up, and the rejection (which waits for the exit) is the proof on its own.
    const pidFile = join(dir, 'pid');
    if (existsSync(pidFile)) expect(alive(Number(readFileSync(pidFile, 'utf8')))).toBe(false);
  });

  it('kills a process that ignores SIGTERM with SIGKILL after a grace period', async () => {
    const stubborn = `process.on('SIGTERM', () => {}); ${hang}`;
    const g = oneNode((ctx) => ctx.exec(['node', '-e', stubborn], { cwd: dir, timeoutMs: 200 }), {
      exec: ['node'],
    });

    const result = await run(g, {});

    expect(result.errors[0]?.code).toBe('EXEC_TIMEOUT');
    const pidFile = join(dir, 'pid');
    if (existsSync(pidFile)) expect(alive(Number(readFileSync(pidFile, 'utf8')))).toBe(false);
  });

  it('kills the process when the run is cancelled through its AbortSignal', async () => {
    const controller = new AbortController();
    let seen: unknown;
    const g = oneNode(
      (ctx) =>
        ctx.exec(['node', '-e', hang], { cwd: dir }).catch((error: unknown) => {
          seen = error;
          throw error;
        }),
      { exec: ['node'] },
    );

    const running = run(g, {}, { signal: controller.signal });
    await eventually(() => existsSync(join(dir, 'pid')), 'the process to start');
    const pid = Number(readFileSync(join(dir, 'pid'), 'utf8'));
    expect(alive(pid)).toBe(true);
    controller.abort(new Error('the user pressed ctrl-c'));
    const result = await running;

    expect(result.status).toBe('cancelled');
    // The run stops at once; ctx.exec rejects once the process has exited.
    await eventually(() => seen !== undefined, 'ctx.exec to settle');
    expect(seen).toMatchObject({ code: 'EXEC_ABORTED' });
    expect(alive(pid)).toBe(false);
  });

  it("kills the process when the node's own timeoutMs passes", async () => {
    let seen: unknown;
    const g = oneNode(
      (ctx) =>
        ctx.exec(['node', '-e', hang], { cwd: dir }).catch((error: unknown) => {
          seen = error;
          throw error;
        }),
      { exec: ['node'], timeoutMs: 300 },
    );

    const result = await run(g, {});

    expect(result.errors[0]?.code).toBe('NODE_TIMEOUT');
    await eventually(() => seen !== undefined, 'ctx.exec to settle');
    expect(seen).toMatchObject({ code: 'EXEC_ABORTED' });
    const pidFile = join(dir, 'pid');
    if (existsSync(pidFile)) expect(alive(Number(readFileSync(pidFile, 'utf8')))).toBe(false);
  });

  it('refuses to start a process once the attempt has stopped', async () => {
    const controller = new AbortController();
    controller.abort();
    const started = execProcess(
      ['node', '-e', "require('fs').writeFileSync('started', '')"],
      { cwd: dir },
      { node: 'work', allow: ['node'], signal: controller.signal },
    );

    await expect(started).rejects.toMatchObject({ code: 'EXEC_ABORTED' });
    expect(readdirSync(dir)).toEqual([]);
  });

  it('keeps at most maxOutputBytes of each stream and says it truncated; the process still runs to its end', async () => {
    const g = oneNode(
      (ctx) =>
        ctx.exec(
          [
            'node',
            '-e',
            "process.stdout.write('x'.repeat(100000)); process.stderr.write('e'); process.exitCode = 0",
          ],
          { maxOutputBytes: 1000 },
        ),
      { exec: ['node'] },
    );

    const { stdout, stderr, truncated, exitCode } = resultOf((await run(g, {})).state.out);

    expect(stdout).toBe('x'.repeat(1000));
    expect(stderr).toBe('e');
    expect(truncated).toBe(true);
    expect(exitCode).toBe(0);
  });

  it('keeps 1 MiB of output by default', async () => {
    const g = oneNode(
      (ctx) => ctx.exec(['node', '-e', "process.stdout.write('y'.repeat(3 * 1024 * 1024))"]),
      { exec: ['node'] },
    );

    const { stdout, truncated } = resultOf((await run(g, {})).state.out);

    expect(stdout.length).toBe(1024 * 1024);
    expect(truncated).toBe(true);
  });

  it('writes input to stdin and closes it', async () => {
    const g = oneNode(
      (ctx) =>
        ctx.exec(['node', '-e', 'process.stdin.pipe(process.stdout)'], { input: 'from stdin' }),
      { exec: ['node'] },
    );

    expect(resultOf((await run(g, {})).state.out).stdout).toBe('from stdin');
  });

  describe('the environment', () => {
    const secret = 'WAYMARK_TEST_SECRET';
    beforeEach(() => {
      process.env[secret] = 'sk-do-not-leak';
    });
    afterEach(() => {
      delete process.env[secret];
    });
    const print = `console.log(JSON.stringify({ secret: process.env.${secret} ?? null, extra: process.env.EXTRA ?? null, path: !!process.env.PATH }))`;

    it("is a minimal one by default: PATH and HOME pass, the engine's secrets do not", async () => {
      const g = oneNode((ctx) => ctx.exec(['node', '-e', print]), { exec: ['node'] });

      const seen = JSON.parse(resultOf((await run(g, {})).state.out).stdout);

      expect(seen).toEqual({ secret: null, extra: null, path: true });
    });

    it('gets what env adds, and everything when given process.env', async () => {
      const g = oneNode(
        async (ctx) => [
          await ctx.exec(['node', '-e', print], { env: { EXTRA: 'yes' } }),
          await ctx.exec(['node', '-e', print], { env: { ...process.env } }),
        ],
        { exec: ['node'] },
      );

      const [added, all] = JSON.parse((await run(g, {})).state.out) as ExecResult[];

      expect(JSON.parse(added!.stdout)).toEqual({ secret: null, extra: 'yes', path: true });
      expect(JSON.parse(all!.stdout)).toMatchObject({ secret: 'sk-do-not-leak' });
    });
  });

  it('fails with EXEC_FAILED when the program cannot start', async () => {
    const g = oneNode((ctx) => ctx.exec(['waymark-no-such-program-here']), {
      exec: ['waymark-no-such-program-here'],
    });

    const result = await run(g, {});

    expect(result.errors[0]).toMatchObject({ code: 'EXEC_FAILED', details: { errno: 'ENOENT' } });
  });

  it.each([
    ['an empty argv', []],
    ['a non-string element', ['node', 42]],
    ['an empty program name', ['']],
    ['a NUL in an argument', ['node', 'a\0b']],
    ['not a list', 'node -e 1'],
  ])('refuses %s with EXEC_INVALID', async (_what, argv) => {
    const g = oneNode((ctx) => ctx.exec(argv as string[]), { exec: ['node'] });

    const result = await run(g, {});

    expect(result.errors[0]).toMatchObject({ code: 'EXEC_INVALID', class: 'permanent' });
  });

  it('refuses a timeoutMs out of range with EXEC_INVALID', async () => {
    const g = oneNode((ctx) => ctx.exec(['node', '-e', ''], { timeoutMs: -1 }), {
      exec: ['node'],
    });

    expect((await run(g, {})).errors[0]?.code).toBe('EXEC_INVALID');
  });
});

describe('the exec node option', () => {
  it('is plain data in the graph, and part of its structural hash', () => {
    const declare = (exec: readonly string[]) =>
      graph('g', { state: State })
        .node('work', () => ({}), { exec })
        .edge('work', END)
        .entry('work')
        .compile();

    const a = declare(['node']);
    const b = declare(['node', 'git']);

    expect(a.def.nodes[0]?.exec).toEqual(['node']);
    expect(a.hash).not.toBe(b.hash);
  });

  it('must be a list of program names', () => {
    const builder = graph('g', { state: State })
      .node('work', () => ({}), { exec: 'node' as unknown as string[] })
      .edge('work', END)
      .entry('work');

    expect(builder.validate()).toMatchObject([{ code: 'OPTION_INVALID', node: 'work' }]);
  });
});
