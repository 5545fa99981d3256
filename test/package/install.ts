// The package as a user gets it: `npm pack` of this repository, installed into a fresh project.
// Used by test/package/*.test.ts and by bench/startup.ts.
//
// better-sqlite3 is a dependency of waymark, and here it compiles from source (about two
// minutes: there are no prebuilt binaries to download). So the repository's own, already built
// copy is put in the project first: npm keeps an installed package that satisfies the range and
// builds nothing. Everything else comes from the npm cache (--prefer-offline).
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root. */
export const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

/** How long `npm pack` or `npm install` may take on a slow CI machine. */
export const npmTimeoutMs = 180_000;

/** Runs npm (no shell); throws with its output when it fails. */
export function npm(args: readonly string[], cwd: string): string {
  const result = spawnSync('npm', [...args], {
    cwd,
    encoding: 'utf8',
    timeout: npmTimeoutMs,
    env: { ...process.env, npm_config_audit: 'false', npm_config_fund: 'false' },
  });
  if (result.status !== 0) {
    throw new Error(
      `npm ${args.join(' ')} failed in ${cwd} (${result.status ?? result.signal}):\n${result.stdout}\n${result.stderr}`,
    );
  }
  return result.stdout;
}

/**
 * Packs the repository into `dir` as `npm pack` does for a publish (its `prepare` script
 * builds dist/ first) and returns the tarball's path and the files it holds.
 */
export function pack(dir: string): { tarball: string; files: string[] } {
  const [report] = JSON.parse(npm(['pack', '--json', '--pack-destination', dir], repoRoot)) as {
    filename: string;
    files: { path: string }[];
  }[];
  return { tarball: join(dir, report!.filename), files: report!.files.map((f) => f.path) };
}

/** The parts of a built native package that it needs at run time (not its C sources). */
const nativeRuntime: Readonly<Record<string, readonly string[]>> = {
  'better-sqlite3': ['package.json', 'lib', 'build/Release/better_sqlite3.node'],
  // better-sqlite3 finds its .node file through these two.
  bindings: ['package.json', 'bindings.js'],
  'file-uri-to-path': ['package.json', 'index.js'],
};

/**
 * Makes `dir` a fresh npm project (`npm init -y`, plus `"type": "module"` when asked) and
 * installs the tarball and `extra` packages (names or paths) into it.
 */
export function installInto(
  dir: string,
  tarball: string,
  options: { readonly type?: 'module'; readonly extra?: readonly string[] } = {},
): void {
  mkdirSync(dir, { recursive: true });
  npm(['init', '-y'], dir);
  if (options.type === 'module') {
    const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as object;
    writeFileSync(
      join(dir, 'package.json'),
      `${JSON.stringify({ ...manifest, type: 'module' }, null, 2)}\n`,
    );
  }
  for (const [name, parts] of Object.entries(nativeRuntime)) {
    for (const part of parts) {
      cpSync(join(repoRoot, 'node_modules', name, part), join(dir, 'node_modules', name, part), {
        recursive: true,
      });
    }
  }
  npm(['install', '--prefer-offline', tarball, ...(options.extra ?? [])], dir);
}
