// How long the `waymark` command takes to start: `waymark --version` and `waymark ls` on an
// empty database, from the package as a user installs it (npm pack, then npm install into a
// fresh project) and from this clone, next to bare `node -e 0` on the same machine. Each call
// is a fresh process, timed from spawn to exit; the contenders alternate (ABBA) after a warm-up
// by time, as BENCHMARKS.md says.
//
//   npm run bench -- startup
//   BENCH_STARTUP_BEFORE=684aa9d npm run bench -- startup   # and the command at that commit
//
// The "before" commit is extracted with git archive beside this clone's node_modules: its clone
// runs its own bin/waymark.js, and its "installed" side is its tsc build run without src/ (what
// an installed package of it would have run).
import { spawnSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { installInto, pack, repoRoot } from '../test/package/install.js';
import {
  type Contender,
  type ContenderResult,
  check,
  compare,
  progress,
  type Stat,
  settingsFromEnv,
  stat,
} from './lib/measure.js';
import { emit, type Row } from './lib/report.js';

const settings = settingsFromEnv();
const work = mkdtempSync(join(tmpdir(), 'waymark-startup-'));
process.on('exit', () => rmSync(work, { recursive: true, force: true }));

progress('startup: packing and installing waymark into a fresh project');
const { tarball } = pack(work);
const app = join(work, 'app');
installInto(app, tarball);
const installedBin = join(app, 'node_modules', '.bin', 'waymark');
const cloneBin = join(repoRoot, 'bin', 'waymark.js');
const version = spawnOk([installedBin, '--version'], app).stdout.trim();

// An empty database: waymark's schema and no run, made by the installed package itself.
const emptyDb = join(work, 'empty.db');
spawnOk(
  [
    '--input-type=module',
    '-e',
    `const { SqliteStore } = await import('waymark/sqlite'); await new SqliteStore({ path: ${JSON.stringify(emptyDb)} }).close();`,
  ],
  app,
  true,
);

// The least an `ls` can cost: the same driver opening the same file and reading its runs,
// without waymark. What waymark adds on top of it is its own start.
const sqliteFloor = join(app, 'sqlite-floor.mjs');
writeFileSync(
  sqliteFloor,
  `import { createRequire } from 'node:module';
const Database = createRequire(import.meta.url)('better-sqlite3');
const db = new Database(process.argv[2], { fileMustExist: true });
db.pragma('journal_mode = WAL');
const runs = db.prepare('SELECT id FROM runs LIMIT 50').all();
db.close();
process.stdout.write(runs.length === 0 ? 'no runs\\n' : runs.length + '\\n');
`,
);

interface Call {
  readonly name: string;
  readonly args: readonly string[];
  readonly cwd: string;
  /** What stdout must hold, so a broken start cannot look fast. */
  readonly expect: RegExp;
  readonly target?: number;
}

const calls: Call[] = [
  { name: 'node -e 0 (the floor: Node.js itself)', args: ['-e', '0'], cwd: app, expect: /^$/ },
  {
    name: 'better-sqlite3 alone: open the file, list its runs (the floor of ls)',
    args: [sqliteFloor, emptyDb],
    cwd: app,
    expect: /^no runs$/m,
  },
  {
    name: 'installed: waymark --version',
    args: [installedBin, '--version'],
    cwd: app,
    expect: /^\d+\.\d+\.\d+/,
    target: 150,
  },
  {
    name: 'installed: waymark ls (empty database)',
    args: [installedBin, '--db', emptyDb, 'ls'],
    cwd: app,
    expect: /^no runs$/m,
    target: 150,
  },
  {
    name: 'clone: waymark --version',
    args: [cloneBin, '--version'],
    cwd: app,
    expect: /^\d+\.\d+\.\d+/,
    target: 400,
  },
  {
    name: 'clone: waymark ls (empty database)',
    args: [cloneBin, '--db', emptyDb, 'ls'],
    cwd: app,
    expect: /^no runs$/m,
    target: 400,
  },
];

const before = process.env.BENCH_STARTUP_BEFORE;
if (before !== undefined && before !== '') calls.push(...beforeCalls(before));

const contenders: Contender[] = calls.map((c) => ({
  name: c.name,
  units: 1,
  call: async () => {
    const out = spawnOk(c.args, c.cwd);
    check(c.expect.test(out.stdout), `${c.name}: unexpected output ${JSON.stringify(out.stdout)}`);
    return undefined;
  },
}));

progress(`startup: warm-up ${settings.warmupMs} ms, ${settings.reps} repetitions`);
const results = await compare(contenders, { settings, minWarmUnits: 0, scale: 1 });
const floor = results[0]!;
const sqlite = results[1]!;

/** Per repetition, the call minus `base` in the same repetition: what the call adds to it. */
function over(result: ContenderResult, base: ContenderResult): Stat {
  return stat(result.values.map((v, i) => v - base.values[i]!));
}
const ms = (s: Stat) => `${s.median.toFixed(0)} ms (${s.min.toFixed(0)}-${s.max.toFixed(0)})`;

const rows: Row[] = results.map((result, i) => {
  const { target, name } = calls[i]!;
  const added = [
    ...(i > 0 ? [`+${over(result, floor).median.toFixed(0)} ms over node`] : []),
    ...(i > 1 && name.includes(' ls ')
      ? [`+${over(result, sqlite).median.toFixed(0)} ms over better-sqlite3 alone`]
      : []),
  ];
  return {
    measure: name,
    unit: 'ms',
    waymark: result.perUnit,
    text: [ms(result.perUnit), ...added].join('; '),
    ...(target !== undefined && {
      target: `< ${target} ms`,
      met: result.perUnit.median < target,
    }),
  };
});

emit({
  scenario: 'startup',
  waymarkOrigin: `npm pack of the working tree (waymark ${version}) and this clone`,
  title: 'start the command: --version and ls on an empty database',
  rows,
  notes: [
    'Startup: one fresh process per call, timed from spawn to exit (median of repetitions; a repetition is the mean of its calls). "Over" is the call minus `node -e 0` (or the better-sqlite3 script) in the same repetition, median.',
    'Installed = node_modules/.bin/waymark of a project that installed the packed tarball (npx adds npm own start-up on top).',
  ],
  details: { settings, results },
});

/** Runs `node ...args`; throws with its output unless it exits 0. */
function spawnOk(args: readonly string[], cwd: string, quiet = false) {
  const result = spawnSync(process.execPath, [...args], {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, NO_COLOR: '1' },
  });
  if (result.status !== 0) {
    throw new Error(
      `bench: node ${args.join(' ')} exited ${result.status}:\n${result.stdout}\n${result.stderr}`,
    );
  }
  if (!quiet && result.stderr !== '') progress(result.stderr.trim());
  return result;
}

/**
 * The command at an earlier commit: its clone (bin/waymark.js over src/ through tsx, as it was
 * then) and its tsc build run the way an installed package runs it (no src/ beside it).
 */
function beforeCalls(rev: string): Call[] {
  progress(`startup: extracting ${rev} to measure the command as it was`);
  const clone = join(work, 'before-clone');
  mkdirSync(clone, { recursive: true });
  const tar = spawnSync('git', ['archive', '--format=tar', rev], {
    cwd: repoRoot,
    maxBuffer: 256 << 20,
  });
  if (tar.status !== 0) throw new Error(`bench: git archive ${rev} failed: ${tar.stderr}`);
  const untar = spawnSync('tar', ['-x', '-C', clone], { input: tar.stdout });
  if (untar.status !== 0) throw new Error(`bench: extracting ${rev} failed: ${untar.stderr}`);
  symlinkSync(join(repoRoot, 'node_modules'), join(clone, 'node_modules'));
  const tsc = join(repoRoot, 'node_modules', 'typescript', 'bin', 'tsc');
  spawnSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { cwd: clone });
  check(existsSync(join(clone, 'dist', 'cli', 'main.js')), `${rev}: tsc built no dist/`);
  // As an installed package: the same bin and dist/, and no src/ for the bin to find.
  const installed = join(work, 'before-installed');
  for (const part of ['bin', 'dist', 'package.json']) {
    cpSync(join(clone, part), join(installed, part), { recursive: true });
  }
  symlinkSync(join(repoRoot, 'node_modules'), join(installed, 'node_modules'));
  writeFileSync(join(work, 'before.txt'), `${rev}\n`);
  // Its own empty database, made by its own store: a newer schema is one it would refuse.
  const beforeDb = join(work, 'before-empty.db');
  const sqlite = pathToFileURL(join(installed, 'dist', 'sqlite.js')).href;
  spawnOk(
    [
      '--input-type=module',
      '-e',
      `const { SqliteStore } = await import(${JSON.stringify(sqlite)}); await new SqliteStore({ path: ${JSON.stringify(beforeDb)} }).close();`,
    ],
    installed,
    true,
  );
  return [
    {
      name: `before (${rev}) installed: waymark ls (empty database)`,
      args: [join(installed, 'bin', 'waymark.js'), '--db', beforeDb, 'ls'],
      cwd: app,
      expect: /^no runs$/m,
    },
    {
      name: `before (${rev}) clone: waymark ls (empty database)`,
      args: [join(clone, 'bin', 'waymark.js'), '--db', beforeDb, 'ls'],
      cwd: app,
      expect: /^no runs$/m,
    },
  ];
}
