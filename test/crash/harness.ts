import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

// What the crash tests share: a fresh JavaScript build of src/, a seeded random generator, and
// child processes that say when they are ready and report how they ended.

/** The repository's root directory, with a trailing separator. */
export const root = fileURLToPath(new URL('../../', import.meta.url));

/**
 * Makes a fresh temporary directory under test/.tmp and compiles src/ into its `build`
 * folder. Plain JavaScript starts in a fraction of the time a TypeScript loader takes, and the
 * crash tests start hundreds of processes.
 */
export function buildSrc(prefix: string): { work: string; build: string } {
  mkdirSync(join(root, 'test/.tmp'), { recursive: true });
  const work = mkdtempSync(join(root, `test/.tmp/${prefix}-`));
  const build = join(work, 'build');
  const tsc = join(root, 'node_modules/typescript/bin/tsc');
  execFileSync(process.execPath, [
    tsc,
    '-p',
    join(root, 'tsconfig.build.json'),
    '--outDir',
    build,
    '--declaration',
    'false',
    '--declarationMap',
    'false',
    '--sourceMap',
    'false',
  ]);
  return { work, build };
}

/** mulberry32: a small seeded generator, so a kill schedule is reproducible. */
export function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** How a child process ended. */
export interface ChildExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

/**
 * Starts `node <script> ...args`. `ready` resolves when the child writes `ready` to stdout,
 * `exit` when it ends; `stderr()` is what it wrote to stderr so far.
 */
export function startChild(script: string, args: readonly string[]) {
  const proc = spawn(process.execPath, [script, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  proc.stderr!.on('data', (d) => {
    stderr += String(d);
  });
  const ready = new Promise<void>((resolve) => {
    proc.stdout!.on('data', (d) => {
      if (String(d).includes('ready')) resolve();
    });
  });
  const exit = new Promise<ChildExit>((resolve) =>
    proc.on('exit', (code, signal) => resolve({ code, signal })),
  );
  return { proc, ready, exit, stderr: () => stderr };
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
