// CPU profile of one waymark workload, summarized per function and per source file, so the
// per-step costs can be named. Not part of `npm run bench`: it measures waymark alone.
//
//   node --import tsx bench/profile.ts [chain|loop|fanout|sqlite|resume|build|validate]
//                                      [--seconds 5]
//                                      [--lines]
//                                      [--ref <git-rev> | --source]
//
// It warms the workload up for 3 s, then samples it with the V8 profiler (through
// node:inspector, so module loading and warm-up stay out of the profile) for `--seconds`,
// prints the tables and saves the raw profile in bench/.profiles/ (open it in Chrome DevTools).
// `--lines` adds the hottest source lines of the top waymark functions. By default waymark is
// the tsc build of the working tree (in bench/.dist-profile), as in `npm run bench`; `--ref`
// builds a commit instead; `--source` profiles src/ through tsx.

import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { SourceMap } from 'node:module';
import { join, relative } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { buildWaymark, repoRoot } from './lib/build-waymark.js';

const workloads = ['chain', 'loop', 'fanout', 'sqlite', 'resume', 'build', 'validate'] as const;
type Workload = (typeof workloads)[number];

const args = process.argv.slice(2);
const optionValue = (flag: string) => {
  const at = args.indexOf(flag);
  return at === -1 ? undefined : args[at + 1];
};
const values = new Set(['--seconds', '--ref'].map(optionValue));
const workload = (args.find((a) => !a.startsWith('--') && !values.has(a)) ?? 'chain') as Workload;
if (!workloads.includes(workload)) {
  process.stderr.write(`profile: unknown workload ${workload}; choose ${workloads.join(', ')}\n`);
  process.exit(2);
}
const seconds = Number(optionValue('--seconds') ?? 5);
const showLines = args.includes('--lines');

if (!args.includes('--source')) {
  const built = buildWaymark(optionValue('--ref'), 'profile');
  process.env.BENCH_WAYMARK_BUILD = built.entry;
  process.env.BENCH_WAYMARK_ORIGIN = built.origin;
}
// Imported after the build is chosen: lib/waymark.ts reads BENCH_WAYMARK_BUILD when it loads.
const graphs = await import('./lib/graphs.js');
const { wm, waymarkOrigin, loadWaymarkSqlite } = await import('./lib/waymark.js');
const { tempDir } = await import('./lib/sqlite.js');

/** One call of the workload; returns the units it did (node steps, or 1 graph). */
async function makeWorkload(): Promise<{ unit: string; call: () => Promise<number> }> {
  switch (workload) {
    case 'chain': {
      const g = graphs.waymarkChain(100);
      return {
        unit: 'step',
        call: async () => {
          const r = await wm.run(g, { counter: 0 });
          if (r.state.counter !== 100) throw new Error('profile: chain result is wrong');
          return r.steps;
        },
      };
    }
    case 'loop': {
      const g = graphs.waymarkLoop(1000);
      return {
        unit: 'step',
        call: async () => {
          const r = await wm.run(g, { i: 0 }, { maxSteps: graphs.stepLimit });
          if (r.state.i !== 1000) throw new Error('profile: loop result is wrong');
          return r.steps;
        },
      };
    }
    case 'fanout': {
      const g = graphs.waymarkFanOut(100);
      const items = Array.from({ length: 100 }, (_, i) => i);
      return {
        unit: 'branch',
        call: async () => {
          const r = await wm.run(g, { items, out: [] });
          if (r.state.out.length !== 100) throw new Error('profile: fanout result is wrong');
          return 100;
        },
      };
    }
    case 'sqlite': {
      // The loop again, durable: SqliteStore on a temp file, a commit per step.
      const { SqliteStore } = await loadWaymarkSqlite();
      const store = new SqliteStore({ path: join(tempDir('profile'), 'waymark.db') });
      const g = graphs.waymarkLoop(1000);
      return {
        unit: 'step',
        call: async () => {
          const r = await wm.run(g, { i: 0 }, { store, maxSteps: graphs.stepLimit });
          if (r.state.i !== 1000) throw new Error('profile: sqlite loop result is wrong');
          return r.steps;
        },
      };
    }
    case 'resume': {
      // bench/resume.ts's short case: a run failed at its tail after 10 steps, resumed (the tail
      // fails again) and put back as it was before each call. The put-back is sampled too; it is
      // the restorer's SQL, not waymark's.
      const { SqliteStore } = await loadWaymarkSqlite();
      const path = join(tempDir('profile'), 'waymark.db');
      const store = new SqliteStore({ path });
      const g = graphs.waymarkLogLoop(5, { appendLog: false, failTail: true });
      const first = await wm.run(g, { i: 0, log: [] }, { store, maxSteps: 20 });
      if (first.status !== 'failed') throw new Error('profile: the run to resume did not fail');
      const stored = await store.getRun(first.runId);
      if (stored === undefined) throw new Error('profile: the failed run is not stored');
      const { runRestorer } = await import('./lib/restore-run.js');
      const restorer = runRestorer(path);
      return {
        unit: 'resume',
        call: async () => {
          restorer.restore(stored);
          const r = await wm.resume(store, g, first.runId);
          if (r.status !== 'failed' || r.steps !== 10) throw new Error('profile: resume is wrong');
          return 1;
        },
      };
    }
    case 'build':
      return {
        unit: 'build',
        call: async () => {
          const g = graphs.waymarkChainBuilder(10_000).compile();
          if (g.nodes.size !== 10_000) throw new Error('profile: build result is wrong');
          return 1;
        },
      };
    case 'validate': {
      const def = graphs.waymarkChainBuilder(10_000).toDef();
      return {
        unit: 'validation',
        call: async () => {
          if (wm.validate(def).length !== 0) throw new Error('profile: graph is invalid');
          return 1;
        },
      };
    }
  }
}

const { unit, call } = await makeWorkload();
const warmUntil = performance.now() + 3000;
while (performance.now() < warmUntil) await call();

const session = new Session();
session.connect();
await session.post('Profiler.enable');
await session.post('Profiler.setSamplingInterval', { interval: 100 });
await session.post('Profiler.start');
let units = 0;
const stopAt = performance.now() + seconds * 1000;
while (performance.now() < stopAt) units += await call();
const { profile } = (await session.post('Profiler.stop')) as { profile: CpuProfile };
session.disconnect();

const profiles = fileURLToPath(new URL('./.profiles/', import.meta.url));
mkdirSync(profiles, { recursive: true });
const saved = `${profiles}${workload}-${new Date().toISOString().replace(/[:.]/g, '-')}.cpuprofile`;
writeFileSync(saved, JSON.stringify(profile));

// ---------------------------------------------------------------------------------------------
// Analysis.

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
  columnNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
  positionTicks?: { line: number; ticks: number }[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const selfUs = new Map<number, number>();
for (let i = 0; i < profile.samples.length; i++) {
  // timeDeltas[i] is the time before sample i; charge it to that sample's node.
  const id = profile.samples[i]!;
  selfUs.set(id, (selfUs.get(id) ?? 0) + Math.max(0, profile.timeDeltas[i] ?? 0));
}
const idle = [...byId.values()].find((n) => n.callFrame.functionName === '(idle)');
const totalUs = [...selfUs].reduce((sum, [id, us]) => sum + (id === idle?.id ? 0 : us), 0);

const distDir = fileURLToPath(new URL('./.dist-profile/', import.meta.url));
const jsLines = new Map<string, string[]>();
const maps = new Map<string, SourceMap | null>();
/** The src/*.ts file and 1-based line of a 0-based position in a built file, through its map. */
function original(
  url: string,
  line: number,
  column?: number,
): { file: string; path: string; line: number } | undefined {
  if (!url.startsWith('file://')) return undefined;
  const path = fileURLToPath(url);
  if (!path.startsWith(distDir)) return undefined;
  if (!maps.has(path)) {
    const mapFile = `${path}.map`;
    maps.set(
      path,
      existsSync(mapFile) ? new SourceMap(JSON.parse(readFileSync(mapFile, 'utf8'))) : null,
    );
    jsLines.set(path, readFileSync(path, 'utf8').split('\n'));
  }
  const map = maps.get(path);
  if (!map) return undefined;
  // Without a column, map the line's first non-blank character.
  const col = column ?? Math.max(0, (jsLines.get(path)?.[line] ?? '').search(/\S/));
  const entry = map.findEntry(line, col) as { originalSource?: string; originalLine?: number };
  if (entry.originalSource === undefined || entry.originalLine === undefined) return undefined;
  const source = fileURLToPath(new URL(entry.originalSource, url));
  // Sources extracted for --ref live in bench/.ref-profile/src; show them as src/.
  const file = relative(repoRoot, source).replace(/^bench\/\.ref-profile\//, '');
  return { file, path: source, line: entry.originalLine + 1 };
}

/** A readable place: src/... for waymark (built or not), the package for node_modules. */
function place(frame: CallFrame): string {
  if (frame.url === '') return '(native)';
  if (!frame.url.startsWith('file://')) return frame.url;
  const path = fileURLToPath(frame.url);
  if (path.startsWith(distDir)) return `src/${relative(distDir, path).replace(/\.js$/, '.ts')}`;
  const rel = relative(repoRoot, path);
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(rel);
  return pkg ? `${pkg[1]}` : rel;
}
const isWaymark = (frame: CallFrame) => place(frame).startsWith('src/');
function keyOf(frame: CallFrame): string {
  const name = frame.functionName || '(anonymous)';
  if (!isWaymark(frame)) return `${name} ${place(frame)}`;
  const at = original(frame.url, frame.lineNumber, frame.columnNumber);
  return `${name} ${at ? `${at.file}:${at.line}` : `${place(frame)}:${frame.lineNumber + 1}`}`;
}

const selfByKey = new Map<string, number>();
const selfByPlace = new Map<string, number>();
for (const [id, us] of selfUs) {
  if (id === idle?.id) continue;
  const frame = byId.get(id)!.callFrame;
  selfByKey.set(keyOf(frame), (selfByKey.get(keyOf(frame)) ?? 0) + us);
  const where = frame.url === '' ? frame.functionName : place(frame);
  selfByPlace.set(where, (selfByPlace.get(where) ?? 0) + us);
}

// Inclusive time per waymark function; recursion counted once per stack.
const totalByKey = new Map<string, number>();
const subtree = new Map<number, number>();
function sumTree(id: number): number {
  const node = byId.get(id)!;
  let sum = selfUs.get(id) ?? 0;
  for (const child of node.children ?? []) sum += sumTree(child);
  subtree.set(id, sum);
  return sum;
}
const root = profile.nodes[0]!;
sumTree(root.id);
const onStack = new Map<string, number>();
function walk(id: number): void {
  const node = byId.get(id)!;
  const key = keyOf(node.callFrame);
  const count = onStack.get(key) ?? 0;
  if (isWaymark(node.callFrame) && count === 0)
    totalByKey.set(key, (totalByKey.get(key) ?? 0) + subtree.get(id)!);
  onStack.set(key, count + 1);
  for (const child of node.children ?? []) walk(child);
  onStack.set(key, count);
}
walk(root.id);

const perUnit = (us: number) => us / units;
const pct = (us: number) => `${((100 * us) / totalUs).toFixed(1)}%`;
const fmt = (us: number) => (us >= 100 ? us.toFixed(0) : us >= 1 ? us.toFixed(2) : us.toFixed(3));
function table(title: string, entries: Iterable<[string, number]>, limit: number): void {
  process.stdout.write(`\n${title}\n`);
  process.stdout.write(`  ${'share'.padStart(6)}  ${`us/${unit}`.padStart(10)}  where\n`);
  for (const [key, us] of [...entries].sort((a, b) => b[1] - a[1]).slice(0, limit)) {
    process.stdout.write(`  ${pct(us).padStart(6)}  ${fmt(perUnit(us)).padStart(10)}  ${key}\n`);
  }
}

process.stdout.write(
  [
    `profile of "${workload}" (waymark: ${waymarkOrigin}; node ${process.version})`,
    `${units.toLocaleString('en-US')} ${unit}s in ${seconds} s of sampling (every 100 us); busy CPU ${fmt(perUnit(totalUs))} us/${unit} while profiled`,
    `raw profile: ${relative(repoRoot, saved)}`,
  ].join('\n'),
);
table('self time by function (top 30)', selfByKey, 30);
table('self time by source file / package', selfByPlace, 20);
table('inclusive time of waymark functions (top 20)', totalByKey, 20);

if (showLines) {
  process.stdout.write('\nhottest lines of the top waymark functions (self samples)\n');
  const top = [...selfByKey]
    .filter(([key]) => key.includes(' src/'))
    .sort((a, b) => b[1] - a[1])
    .slice(0, 8)
    .map(([key]) => key);
  const sources = new Map<string, string[]>();
  const text = (path: string, line: number) => {
    if (!sources.has(path)) sources.set(path, readFileSync(path, 'utf8').split('\n'));
    return (sources.get(path)![line - 1] ?? '').trim().slice(0, 90);
  };
  for (const key of top) {
    const ticks = new Map<string, { path: string; line: number; ticks: number }>();
    for (const node of profile.nodes) {
      if (keyOf(node.callFrame) !== key) continue;
      const url = node.callFrame.url;
      for (const t of node.positionTicks ?? []) {
        const path = fileURLToPath(url);
        const at = original(url, t.line - 1) ?? {
          file: relative(repoRoot, path),
          path,
          line: t.line,
        };
        const where = `${at.file}:${at.line}`;
        const seen = ticks.get(where) ?? { path: at.path, line: at.line, ticks: 0 };
        seen.ticks += t.ticks;
        ticks.set(where, seen);
      }
    }
    const sum = [...ticks.values()].reduce((a, b) => a + b.ticks, 0);
    process.stdout.write(`  ${key}\n`);
    for (const [where, at] of [...ticks].sort((a, b) => b[1].ticks - a[1].ticks).slice(0, 5)) {
      const share = `${((100 * at.ticks) / sum).toFixed(0)}%`;
      process.stdout.write(`    ${share.padStart(4)}  ${where}: ${text(at.path, at.line)}\n`);
    }
  }
}
