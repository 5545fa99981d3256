// What a workspace per branch costs on a 1,000-file repository, against copying the tree:
//
// - workspace: two branches each get a working copy (`git worktree add --detach` at the base),
//   change one file, have their patch taken (a private index, `add --all`, `write-tree`,
//   `commit-tree`) and their copy removed; then the join merges the two patches three-way
//   (`merge-tree --write-tree`) into one commit. Parts: create, patch (capture + remove), merge.
// - copy: two branches each copy the tree (cpSync, without .git), change one file and are
//   removed; merging the copies is left to the caller (there is no merge at all).
//
// Units are branches; the result is milliseconds per branch. Every call checks its result: the
// merged commit holds both changes, each copy holds its change.
//
// Run alone: npm run bench -- workspace   (about a minute; BENCH_FILES changes the tree's size)

import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { memoryLedger } from '../src/effects/ledger.js';
import { MemoryStore } from '../src/store/memory-store.js';
import { mergePatches } from '../src/workspace/merge.js';
import { openWorkspace } from '../src/workspace/session.js';
import { check, compare, numberFromEnv, progress, settingsFromEnv } from './lib/measure.js';
import { emit, type Row } from './lib/report.js';
import { tempDir } from './lib/sqlite.js';

const files = Math.round(numberFromEnv('BENCH_FILES', 1000));
const dir = tempDir('workspace');
const repo = join(dir, 'repo');
const root = join(dir, 'workspaces');

// A tree like a small service: 50 folders of 20 modules, ~1.5 KB each.
mkdirSync(repo, { recursive: true });
for (let i = 0; i < files; i++) {
  const folder = join(repo, 'src', `pkg${String(Math.floor(i / 20)).padStart(2, '0')}`);
  mkdirSync(folder, { recursive: true });
  const body = Array.from(
    { length: 40 },
    (_, l) => `export const v${l} = ${i * 40 + l}; // line ${l}`,
  );
  writeFileSync(join(folder, `mod${i % 20}.js`), `${body.join('\n')}\n`);
}
const git = (...args: string[]) =>
  execFileSync('git', ['-c', 'user.name=bench', '-c', 'user.email=bench@localhost', ...args], {
    cwd: repo,
    encoding: 'utf8',
  }).trim();
git('init', '--quiet', '--initial-branch=main');
git('add', '--all');
git('commit', '--quiet', '-m', 'a 1,000-file tree');
progress(`repository of ${files} files at ${repo}`);

const left = 'src/pkg00/mod0.js';
const right = `src/pkg${String(Math.floor((files - 1) / 20)).padStart(2, '0')}/mod${(files - 1) % 20}.js`;
const signal = new AbortController().signal;
let run = 0;

async function workspaces(): Promise<Record<string, number>> {
  const runId = `bench-${++run}`;
  const ledger = memoryLedger(new MemoryStore());
  const def = { repo, base: 'main', patch: 'code' } as const;
  const branch = async (name: string, file: string) => {
    const t0 = performance.now();
    const session = await openWorkspace(def, {
      runId,
      activationId: `plan:1[${name}]/edit:1`,
      attempt: 1,
      node: 'edit',
      state: { code: null },
      ledger,
      signal,
      now: () => Date.now(),
      exec: () => Promise.reject(new Error('no processes here')),
      root,
    });
    const t1 = performance.now();
    const target = join(session.path, file);
    writeFileSync(target, `${readFileSync(target, 'utf8')}export const edited = '${name}';\n`);
    const patch = await session.finish();
    return { patch, create: t1 - t0, patch_: performance.now() - t1 };
  };
  // Side by side, as a fan-out's branches run.
  const [a, b] = await Promise.all([branch('0', left), branch('1', right)]);
  const t2 = performance.now();
  const merged = await mergePatches({ node: 'merge', signal, gitDir: join(repo, '.git') }, [
    [0, a.patch],
    [1, b.patch],
  ]);
  const merge = performance.now() - t2;
  check(merged.ok, 'the two patches merge cleanly');
  if (merged.ok) check(merged.patch.files.length === 2, 'the merge holds both changes');
  return { create: (a.create + b.create) / 2, patch: (a.patch_ + b.patch_) / 2, merge };
}

let copies = 0;
async function copying(): Promise<Record<string, number>> {
  const branch = async (name: string, file: string) => {
    const to = join(dir, 'copies', `${++copies}`);
    const t0 = performance.now();
    cpSync(repo, to, { recursive: true, filter: (src) => !src.includes('/.git') });
    const t1 = performance.now();
    const target = join(to, file);
    writeFileSync(target, `${readFileSync(target, 'utf8')}export const edited = '${name}';\n`);
    check(readFileSync(target, 'utf8').includes(name), 'the copy holds its change');
    rmSync(to, { recursive: true, force: true });
    return { create: t1 - t0, remove: performance.now() - t1 };
  };
  const [a, b] = await Promise.all([branch('0', left), branch('1', right)]);
  return { create: (a.create + b.create) / 2, remove: (a.remove + b.remove) / 2 };
}

const settings = { ...settingsFromEnv(), reps: Math.min(settingsFromEnv().reps, 9) };
const [ws, cp] = await compare(
  [
    { name: 'workspace', units: 2, call: workspaces },
    { name: 'copy', units: 2, call: copying },
  ],
  { settings, minWarmUnits: 4, scale: 1 },
);
const ms = (s: { median: number }) => `${s.median.toFixed(0)} ms`;
const rows: Row[] = [
  {
    measure: `workspace per branch on ${files} files: create + patch + merge share`,
    unit: 'ms',
    waymark: ws!.perUnit,
    peer: cp!.perUnit,
    ratio: cp!.perUnit.median / ws!.perUnit.median,
    peerText: `${cp!.perUnit.median.toFixed(0)} ms (copy the tree, no merge)`,
  },
  {
    measure: 'parts: each branch create / patch (they overlap), the join merge',
    unit: 'ms',
    text: `${ms(ws!.parts.create!)} / ${ms(ws!.parts.patch!)} / ${ms(ws!.parts.merge!)}`,
    peerText: `copy ${ms(cp!.parts.create!)}, remove ${ms(cp!.parts.remove!)}`,
  },
];
emit({
  scenario: 'workspace',
  title: `a workspace per branch (git worktree, patch, merge-tree) vs copying a ${files}-file tree`,
  waymarkOrigin: 'src/ through tsx (the cost is git processes and file I/O)',
  peerName: 'copy',
  rows,
  notes: [
    `workspace: two branches side by side, each worktree add --detach at the base, one file changed, patch taken through a private index and the copy removed, then merge-tree of the two patches into one commit; per branch = the call / 2. copy: two cpSync copies of the tree without .git, one file changed, removed; nothing merged. Repository: ${files} files of ~1.5 KB in 50 folders.`,
  ],
  details: { settings, workspace: ws, copy: cp },
});
