// Compiles waymark with the project's tsc into bench/.dist, so the benchmarks measure the code
// users get from the package, not tsx's on-the-fly transform. With a git revision, the sources
// of that commit are compiled instead of the working tree, so published numbers name a commit.

import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

/** What was built: the entry point to import and a description for the report. */
export interface Built {
  readonly entry: string;
  readonly origin: string;
}

function git(args: string[], input?: Buffer): Buffer {
  const result = spawnSync('git', args, { cwd: repoRoot, maxBuffer: 256 << 20, input });
  if (result.status !== 0) throw new Error(`bench: git ${args[0]} failed: ${result.stderr}`);
  return result.stdout;
}

/** Extracts src/ and the tsconfig files of `ref` into `refDir`; returns the project file. */
function checkout(ref: string, refDir: string): string {
  rmSync(refDir, { recursive: true, force: true });
  mkdirSync(refDir, { recursive: true });
  const tar = git(['archive', '--format=tar', ref, 'src', 'tsconfig.json', 'tsconfig.build.json']);
  const untar = spawnSync('tar', ['-x', '-C', refDir], { input: tar });
  if (untar.status !== 0) throw new Error(`bench: extracting ${ref} failed: ${untar.stderr}`);
  return `${refDir}tsconfig.build.json`;
}

/**
 * Builds the working tree's src/, or the commit `ref`, into bench/.dist (bench/.dist-<name>
 * when named, so the profiler and a benchmark run can build at the same time); throws with
 * tsc's output on failure.
 */
export function buildWaymark(ref?: string, name?: string): Built {
  const suffix = name === undefined ? '' : `-${name}`;
  const outDir = fileURLToPath(new URL(`../.dist${suffix}/`, import.meta.url));
  const refDir = fileURLToPath(new URL(`../.ref${suffix}/`, import.meta.url));
  rmSync(outDir, { recursive: true, force: true });
  const project = ref === undefined ? 'tsconfig.build.json' : checkout(ref, refDir);
  const tsc = fileURLToPath(new URL('../../node_modules/typescript/bin/tsc', import.meta.url));
  const args = [
    tsc,
    '-p',
    project,
    '--outDir',
    outDir,
    '--declaration',
    'false',
    '--declarationMap',
    'false',
    // Source maps let bench/profile.ts name src/*.ts lines; nothing loads them at run time.
    '--sourceMap',
    'true',
  ];
  const result = spawnSync(process.execPath, args, { cwd: repoRoot, encoding: 'utf8' });
  const entry = `${outDir}index.js`;
  // tsc emits even when a concurrent edit has a type error; only a missing output is fatal.
  if (!existsSync(entry)) {
    throw new Error(`bench: building waymark failed:\n${result.stdout}${result.stderr}`);
  }
  if (result.status !== 0) {
    process.stderr.write(
      `bench: tsc reported problems, measuring its output anyway:\n${result.stdout}`,
    );
  }
  if (ref !== undefined) {
    const commit = git(['rev-parse', '--short', `${ref}^{commit}`])
      .toString()
      .trim();
    return { entry, origin: `tsc build of src/ at commit ${commit}` };
  }
  const commit = git(['rev-parse', '--short', 'HEAD']).toString().trim();
  const dirty = git(['status', '--porcelain', '--', 'src']).length > 0;
  return {
    entry,
    origin: `tsc build of src/ (working tree at ${commit}${dirty ? ', with uncommitted changes' : ''})`,
  };
}
