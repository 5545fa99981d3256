// How the `waymark` command runs in a clone of the repository: from a transpiled copy of src/,
// so it always runs the code you are looking at without paying for a TypeScript loader on
// every start. The copy lives in node_modules/.cache/waymark/<key>/, where the key covers the
// path, size and modification time of every file in src/: an edit makes a new key, and the
// first command after it transpiles src/ again with esbuild (about 0.2 s); every other start
// only compares the key (about 2 ms). docs/cli.md, "Startup", says why.
import { createHash } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const src = fileURLToPath(new URL('../src/', import.meta.url));
const cache = fileURLToPath(new URL('../node_modules/.cache/waymark/', import.meta.url));
/** Bumped when the way src/ is transpiled changes, so an old copy is never taken for current. */
const recipe = 'esbuild-esm-node20-1';
/** Copies made more than a day ago are removed, except the newest few. */
const keep = 3;
const staleMs = 24 * 60 * 60 * 1000;

/** The modules of src/ to transpile: every .ts file but the tests. */
function sources(dir = src, found = []) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) sources(path, found);
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts')) found.push(path);
  }
  return found;
}

/**
 * The URL (ending in `/`) of a directory holding src/ transpiled to JavaScript, laid out like
 * dist/: made now if src/ changed since the last one.
 */
export function transpiledSource() {
  const files = sources().sort();
  const hash = createHash('sha256').update(recipe);
  for (const file of files) {
    const { size, mtimeMs } = statSync(file);
    hash.update(`\0${file}\0${size}\0${mtimeMs}`);
  }
  const key = hash.digest('hex').slice(0, 16);
  const dir = join(cache, key);
  if (!existsSync(join(dir, 'cli', 'main.js'))) transpile(files, dir);
  return pathToFileURL(`${dir}/`).href;
}

function transpile(files, dir) {
  const esbuild = loadEsbuild();
  // Built aside and renamed into place: a command started meanwhile never sees half a copy, and
  // of two commands building at once, the second finds the first one's copy and drops its own.
  const building = `${dir}.${process.pid}.tmp`;
  rmSync(building, { recursive: true, force: true });
  try {
    esbuild.buildSync({
      entryPoints: files,
      outdir: building,
      outbase: src,
      format: 'esm',
      platform: 'node',
      target: 'node20',
      // Source maps point stack traces (--verbose) at src/*.ts.
      sourcemap: 'linked',
      logLevel: 'silent',
    });
  } catch (error) {
    rmSync(building, { recursive: true, force: true });
    const detail = error?.errors?.[0];
    const where = detail?.location
      ? `${detail.location.file}:${detail.location.line}:${detail.location.column}: `
      : '';
    process.stderr.write(
      `waymark: cannot transpile src/ to run it: ${where}${detail?.text ?? error}\n`,
    );
    process.exit(1);
  }
  // The copy sits under node_modules, where Node stops looking for the repository's package.json.
  writeFileSync(join(building, 'package.json'), '{ "type": "module" }\n');
  try {
    renameSync(building, dir);
  } catch {
    rmSync(building, { recursive: true, force: true });
    if (!existsSync(join(dir, 'cli', 'main.js'))) throw new Error(`waymark: cannot write ${dir}`);
  }
  prune(dir);
}

/** esbuild comes with tsx, a dependency of waymark; it is hoisted in a clone, but need not be. */
function loadEsbuild() {
  const require = createRequire(import.meta.url);
  try {
    return require('esbuild');
  } catch {
    return createRequire(require.resolve('tsx'))('esbuild');
  }
}

function prune(current) {
  mkdirSync(cache, { recursive: true });
  const copies = readdirSync(cache)
    .map((name) => join(cache, name))
    .filter((path) => path !== current)
    .flatMap((path) => {
      // Another waymark process may rename or remove its copy between the listing and here.
      try {
        return [{ path, at: statSync(path).mtimeMs }];
      } catch {
        return [];
      }
    })
    .sort((a, b) => b.at - a.at);
  for (const { path, at } of copies.slice(keep - 1)) {
    if (Date.now() - at > staleMs) rmSync(path, { recursive: true, force: true });
  }
}
