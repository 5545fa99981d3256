import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

// DESIGN.md section 2: dependencies point downward only. Each layer lists what it may import.
const allowed: Record<string, readonly string[]> = {
  error: ['error'],
  graph: ['error', 'graph'],
  // The worst case of a run, read from the declaration alone.
  cost: ['error', 'graph', 'cost'],
  store: ['error', 'store'],
  effects: ['error', 'effects', 'store'],
  runtime: ['error', 'graph', 'cost', 'runtime', 'store', 'effects', 'workspace'],
  // Working copies and patches: git through the process runner, effects for the recorded base.
  workspace: ['error', 'graph', 'effects', 'workspace'],
  model: ['error', 'graph', 'runtime', 'model'],
  server: ['error', 'graph', 'cost', 'runtime', 'store', 'server'],
  // telemetry: only loaded on demand, when WAYMARK_OTEL asks for spans (cli-telemetry.ts).
  cli: [
    'error',
    'graph',
    'cost',
    'runtime',
    'store',
    'effects',
    'model',
    'server',
    'telemetry',
    // `waymark coverage` reads a store's runs with the coverage collector of waymark/testing.
    'testing',
    'cli',
  ],
  // The history checker replays stored events through the runtime's own decode and step.
  testing: ['error', 'graph', 'cost', 'runtime', 'store', 'testing'],
  // The web page runs in a browser: nothing from the rest of src/ (test/ui/layer.test.ts).
  ui: ['ui'],
  telemetry: ['error', 'graph', 'runtime', 'telemetry'],
};

const src = new URL('../src/', import.meta.url).pathname;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') ? [path] : [];
  });
}

function tsxFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return tsxFiles(path);
    return entry.name.endsWith('.tsx') ? [path] : [];
  });
}

function relativeImports(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(/from '(\.[^']+)'/g)].map((m) => m[1]!);
}

describe('the layers of src/', () => {
  it('import only downward: graph never reaches runtime, stores never reach the runtime', () => {
    const violations: string[] = [];
    for (const file of sourceFiles(src)) {
      const from = relative(src, file).split('/');
      if (from.length === 1) continue; // src/index.ts is the public surface and may import anything
      const layer = from[0]!;
      for (const spec of relativeImports(file)) {
        const target = relative(src, join(file, '..', spec)).split('/');
        const targetLayer = target[0]!;
        if (!(allowed[layer] ?? []).includes(targetLayer))
          violations.push(`${from.join('/')} imports ${target.join('/')}`);
        // internal/ folders are private to their layer.
        if (target.includes('internal') && targetLayer !== layer)
          violations.push(`${from.join('/')} reaches into ${target.join('/')}`);
      }
    }
    expect(violations).toEqual([]);
  });

  it('keep every file under 600 lines (STYLE.md 6: split anything over 600)', () => {
    const long = [...sourceFiles(src), ...tsxFiles(join(src, 'ui'))]
      .map((file) => ({
        file: relative(src, file),
        lines: readFileSync(file, 'utf8').split('\n').length,
      }))
      .filter(({ lines }) => lines > 600);
    expect(long).toEqual([]);
  });

  it('keep every layer folder known to the rules above', () => {
    const layers = readdirSync(src, { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => e.name);
    expect(layers.filter((l) => !(l in allowed))).toEqual([]);
  });
});

describe('the pure core of the runtime (src/runtime/core)', () => {
  // STYLE.md 1 and DESIGN.md 2: the step function performs no I/O. Replay, resume and a worker
  // on another machine are the same code only while this holds.
  it('imports no node:* module, no store, no effects and no clock', () => {
    const core = join(src, 'runtime', 'core');
    const violations: string[] = [];
    for (const file of sourceFiles(core)) {
      const text = readFileSync(file, 'utf8');
      const name = relative(src, file);
      for (const m of text.matchAll(/from '([^']+)'/g)) {
        const spec = m[1]!;
        if (!spec.startsWith('.')) {
          // Bare imports: only type-level zod is allowed; node built-ins and drivers are I/O.
          if (spec.startsWith('node:') || !['zod'].includes(spec))
            violations.push(`${name} imports ${spec}`);
          continue;
        }
        const target = relative(src, join(file, '..', spec));
        const inCore = target.startsWith('runtime/core/');
        const allowedOutside = target.startsWith('error/') || target.startsWith('graph/');
        if (!inCore && !allowedOutside) violations.push(`${name} imports ${target}`);
      }
    }
    expect(violations).toEqual([]);
  });

  it('is not empty: the transition and its rules live there', () => {
    const core = join(src, 'runtime', 'core');
    const names = sourceFiles(core).map((f) => relative(core, f));
    expect(names).toEqual(expect.arrayContaining(['step.ts', 'fan-out.ts', 'apply-update.ts']));
  });
});

describe('one engine, two hosts (src/runtime/engine)', () => {
  // DESIGN.md section 7: exactly one piece of code folds a run's events, commits and keeps its
  // lease; the in-process host (runtime/local) and the worker (runtime/worker) host it. Anything
  // else that drove a run would be a third copy of the guarantees, free to drift.
  it('is imported only by the hosts: the drive and the lease keeper are theirs alone', () => {
    const engine = ['runtime/engine/drive.ts', 'runtime/engine/lease-keeper.ts'];
    const hosts = ['runtime/local/', 'runtime/worker/', 'runtime/engine/'];
    const violations: string[] = [];
    for (const file of sourceFiles(src)) {
      const name = relative(src, file);
      for (const spec of relativeImports(file)) {
        const target = relative(src, join(file, '..', spec)).replace(/\.js$/, '.ts');
        if (engine.includes(target) && !hosts.some((h) => name.startsWith(h)))
          violations.push(`${name} imports ${target}`);
      }
    }
    expect(violations).toEqual([]);
  });

  it('has one drive: nothing but the engine steps a run and commits it', () => {
    // The journal's record/recordAll are what commit steps; outside the engine only the
    // operations that append one event to a run nobody drives (cancel, patch) use the journal.
    const allowed = ['runtime/engine/', 'runtime/ops/cancel.ts', 'runtime/ops/patch.ts'];
    const violations: string[] = [];
    for (const file of sourceFiles(join(src, 'runtime'))) {
      const name = relative(src, file);
      const text = readFileSync(file, 'utf8');
      if (
        /\.record(All)?\(/.test(text) &&
        /Journal/.test(text) &&
        !allowed.some((a) => name.startsWith(a))
      )
        violations.push(name);
    }
    expect(violations).toEqual([]);
  });
});
