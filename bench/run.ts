// Runs the benchmark scenarios, each in a fresh child process, and prints one table.
//
//   npm run bench                      all scenarios but `workers` (about 4-5 minutes)
//   npm run bench -- chain loop        only these
//   npm run bench -- workers           the PostgreSQL worker numbers (WAYMARK_PG_URL; ~12 minutes)
//   npm run bench -- time              sleeping runs on PostgreSQL workers (WAYMARK_PG_URL)
//   npm run bench -- --quick           short warm-up and 3 repetitions: a smoke test, not numbers
//   npm run bench -- --ref HEAD        measure the tsc build of a commit, not the working tree
//   npm run bench -- --source          measure src/ through tsx instead of the tsc build
//   npm run bench -- --json out.json   also write every scenario's full report to out.json
//
// Targets are printed, never asserted: the exit code is non-zero only when a scenario crashed
// or one of its result checks failed.

import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { buildWaymark, repoRoot } from './lib/build-waymark.js';
import { environment } from './lib/env.js';
import type { Settings, Stat } from './lib/measure.js';
import { type Row, resultPrefix, type ScenarioReport } from './lib/report.js';

const scenarios: Readonly<Record<string, string>> = {
  chain: '100-node chain, async nodes, in memory: waymark vs LangGraph.js',
  loop: '2-node loop x1,000, async nodes, in memory: waymark vs LangGraph.js',
  fanout: '100-way map fan-out + append join, in memory: waymark vs LangGraph.js Send',
  subgraph:
    '100-item map of a 4-node subgraph, in memory and on SQLite: vs the flat branch and LangGraph.js subgraphs with Send',
  sqlite: 'chain and loop persisted to SQLite: waymark SqliteStore vs LangGraph.js SqliteSaver',
  resume: 'resume after 10 vs 10,000 steps, and SQLite file size after 1,000 appends',
  build: 'declare + compile a 10,000-node chain: waymark vs LangGraph.js',
  validate: 'validate generated 10k/20k/40k-node graphs: growth per doubling',
  startup: 'start the command: --version and ls on an empty database, installed and in the clone',
  stream: "commit -> a watcher of the run's stream in another process, on SQLite and PostgreSQL",
  serve:
    'waymark serve: events/s to 100 SSE clients of one busy run, and its added latency per request',
  ui: 'waymark ui: open a finished 10,000-step run in headless Chromium, until drawn',
  telemetry: 'per-step cost without telemetry, with otel() and no provider, and with the SDK',
  heartbeat: 'ctx.heartbeat() in process: cost per heartbeat, with and without idleTimeoutMs',
  workspace:
    'a workspace per branch (worktree, patch, merge-tree) vs copying the tree, 1,000 files',
  time: 'PostgreSQL workers: empty claims with 10,000 runs asleep, wake lateness of 1,000 due at once (only when named)',
  workers:
    'PostgreSQL workers: throughput vs pg-boss, fan-out 1 vs 4, latency, durable step, takeover, a 1,000-item map (only when named)',
};

/** Scenarios that run only when named: they need a PostgreSQL server (WAYMARK_PG_URL). */
const optIn = new Set(['workers', 'time']);

/**
 * Scenarios measured in more than one child process: each entry is the arguments of one child,
 * which runs alone in a fresh process like every scenario.
 */
const parts: Readonly<Record<string, readonly (readonly string[])[]>> = {
  sqlite: [['chain'], ['loop']],
  subgraph: [['memory'], ['sqlite']],
  time: [['asleep'], ['wake'], ['signal'], ['rate']],
  workers: [['throughput'], ['fanout'], ['latency'], ['step'], ['takeover'], ['widemap']],
};

const flags = new Set<string>();
const named: string[] = [];
let ref: string | undefined;
let jsonFile: string | undefined;
for (let i = 2; i < process.argv.length; i++) {
  const arg = process.argv[i]!;
  if (arg === '--ref') ref = process.argv[++i];
  else if (arg === '--json') jsonFile = process.argv[++i];
  else if (arg.startsWith('--')) flags.add(arg);
  else named.push(arg);
}
const known = ['--help', '--quick', '--source'];
const badFlag = [...flags].find((f) => !known.includes(f));
if (
  flags.has('--help') ||
  badFlag !== undefined ||
  (ref === undefined && process.argv.includes('--ref')) ||
  (jsonFile === undefined && process.argv.includes('--json'))
) {
  process.stdout.write(
    `usage: npm run bench -- [scenario...] [--quick] [--ref <git-rev> | --source] [--json <file>]\n${Object.entries(
      scenarios,
    )
      .map(([name, what]) => `  ${name.padEnd(9)} ${what}`)
      .join('\n')}\n`,
  );
  process.exit(flags.has('--help') ? 0 : 2);
}
const unknown = named.filter((n) => !(n in scenarios));
if (unknown.length > 0) {
  process.stderr.write(
    `bench: unknown scenario ${unknown.join(', ')}; choose from ${Object.keys(scenarios).join(', ')}\n`,
  );
  process.exit(2);
}
const selected = named.length > 0 ? named : Object.keys(scenarios).filter((n) => !optIn.has(n));

/** The children's environment: no tracing variables, which would slow LangGraph.js down. */
function childEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (/^(LANGCHAIN|LANGSMITH)_/.test(key)) continue;
    env[key] = value;
  }
  return { ...env, ...extra };
}

const extra: Record<string, string> = flags.has('--quick')
  ? { BENCH_WARMUP_MS: '300', BENCH_REPS: '3', BENCH_REP_MS: '100' }
  : {};
if (!flags.has('--source')) {
  process.stderr.write(`building waymark${ref ? ` at ${ref}` : ''} (tsc -> bench/.dist) ...\n`);
  const built = buildWaymark(ref);
  extra.BENCH_WAYMARK_BUILD = built.entry;
  extra.BENCH_WAYMARK_ORIGIN = built.origin;
}

function runScenario(name: string, args: readonly string[]): Promise<ScenarioReport> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', `bench/${name}.ts`, ...args], {
      cwd: repoRoot,
      env: childEnv(extra),
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      out += chunk;
    });
    child.on('error', reject);
    child.on('close', (code) => {
      const line = out.split('\n').find((l) => l.startsWith(resultPrefix));
      if (code !== 0 || line === undefined) {
        const what = [name, ...args].join(' ');
        reject(new Error(`scenario ${what} exited with ${code}${line ? '' : ', no result'}`));
        return;
      }
      resolve(JSON.parse(line.slice(resultPrefix.length)) as ScenarioReport);
    });
  });
}

const env = environment();
const loadBefore = loadavg()[0]!;
const startedAt = Date.now();
const reports: ScenarioReport[] = [];
const failures: string[] = [];
for (const name of selected) {
  process.stderr.write(`running ${name}: ${scenarios[name]}\n`);
  for (const args of parts[name] ?? [[]]) {
    const childStart = Date.now();
    try {
      reports.push(await runScenario(name, args));
    } catch (error) {
      failures.push(error instanceof Error ? error.message : String(error));
    }
    const took = ((Date.now() - childStart) / 1000).toFixed(0);
    process.stderr.write(`  ${[name, ...args].join(' ')} took ${took} s\n`);
  }
}
const seconds = (Date.now() - startedAt) / 1000;

// ---------------------------------------------------------------------------------------------
// The table.

function num(n: number): string {
  if (n >= 100) return Math.round(n).toLocaleString('en-US');
  if (n >= 10) return n.toFixed(1);
  return n.toFixed(2);
}
function cell(s: Stat | undefined, unit: string): string {
  if (s === undefined) return '';
  return `${num(s.median)} ${unit} (${num(s.min)}-${num(s.max)})`;
}
function line(row: Row): string[] {
  return [
    row.measure,
    row.text ?? cell(row.waymark, row.unit),
    row.peerText ?? cell(row.peer, row.unit),
    row.ratio === undefined ? '' : `${num(row.ratio)}x`,
    row.target ?? '',
    row.met === undefined ? '' : row.met ? 'yes' : 'NO',
  ];
}
// The peer column is named after the peer when every scenario has the same one.
const peers = new Set(
  reports
    .map((r) => r.peerName ?? (r.scenario === 'workers' ? undefined : 'LangGraph.js'))
    .filter((name) => name !== undefined),
);
const peer = peers.size === 1 ? [...peers][0]! : peers.size === 0 ? 'LangGraph.js' : 'peer';
const ratioHeader = peer === 'LangGraph.js' ? 'LangGraph/waymark' : 'ratio (>1: waymark better)';
const header = ['measure', 'waymark', peer, ratioHeader, 'target', 'met'];
const inMemory = reports.some((r) => r.scenario !== 'workers');
const body = reports.flatMap((r) => r.rows.map(line));
const widths = header.map((h, i) => Math.max(h.length, ...body.map((cells) => cells[i]!.length)));
const format = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;

const origin = reports[0]?.waymarkOrigin ?? (flags.has('--source') ? 'src/ via tsx' : 'build');
const used = reports[0]?.details.settings as Settings | undefined;
const settings =
  used === undefined
    ? ''
    : `warm-up ${used.warmupMs / 1000} s, ${used.reps} repetitions of ~${used.repMs} ms per side, median (min-max)${flags.has('--quick') ? ' — QUICK: a smoke test, do not publish' : ''}`;
process.stdout.write(
  [
    '',
    `waymark benchmarks — node ${env.node}, ${env.cpu} x${env.cores}, @langchain/langgraph ${env.langgraph}, @langchain/core ${env.langchainCore}`,
    `waymark: ${origin}; ${settings}; load average ${loadBefore.toFixed(2)} -> ${loadavg()[0]!.toFixed(2)}; ${seconds.toFixed(0)} s`,
    '',
    format(header),
    format(widths.map((w) => '-'.repeat(w))),
    ...body.map(format),
    '',
    ...(inMemory
      ? [
          'Per-step us = run time / node executions (LangGraph.js without a checkpointer, except in the SQLite rows).',
        ]
      : []),
    ...reports.flatMap((r) => r.notes ?? []),
    ...(inMemory
      ? ['XState reference (BENCHMARKS.md, same machine kind): async transition 34-39 us/step.']
      : []),
    // The benchmark itself keeps one core busy, so ~1 is its own load.
    ...(loadBefore > env.cores * 0.75
      ? [
          `Note: the machine was busy before the run (load ${loadBefore.toFixed(2)} on ${env.cores} cores); absolute times are inflated, ratios less so.`,
        ]
      : []),
    '',
  ].join('\n'),
);
if (jsonFile !== undefined) {
  const record = { env, loadBefore, seconds, reports, failures };
  writeFileSync(jsonFile, `${JSON.stringify(record, null, 2)}\n`);
}
if (failures.length > 0) {
  process.stderr.write(`\nFAILED:\n${failures.map((f) => `  ${f}`).join('\n')}\n`);
  process.exit(1);
}
