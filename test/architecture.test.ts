import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

// DESIGN.md section 2: dependencies point downward only. Each layer lists what it may import.
const allowed: Record<string, readonly string[]> = {
  error: ['error'],
  graph: ['error', 'graph'],
  store: ['error', 'store'],
  effects: ['error', 'effects', 'store'],
  runtime: ['error', 'graph', 'runtime', 'store', 'effects'],
  model: ['error', 'graph', 'runtime', 'model'],
  server: ['error', 'graph', 'runtime', 'store', 'server'],
  // telemetry: only loaded on demand, when WAYMARK_OTEL asks for spans (cli-telemetry.ts).
  cli: ['error', 'graph', 'runtime', 'store', 'effects', 'model', 'server', 'telemetry', 'cli'],
  testing: ['error', 'graph', 'store', 'testing'],
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
