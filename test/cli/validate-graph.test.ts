// `waymark validate` and `waymark graph`: checking and drawing a graph file, nothing run.
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  example,
  expectError,
  expectExit,
  fixture,
  jsonLines,
  jsonOf,
  sandbox,
  testTimeoutMs,
} from './support.js';

const changelog = example('changelog-post/graph.ts');
/** Every problem fixtures/invalid.ts has: each must be shown, not just the first. */
const problems = ['EDGE_TARGET_UNKNOWN', 'DEAD_END', 'FIELD_UNKNOWN', 'UNREACHABLE'];

describe.concurrent('waymark validate', { timeout: testTimeoutMs }, () => {
  it('says a valid graph is valid, with its node count and hash, and exits 0', async () => {
    const out = await sandbox().waymark(['validate', changelog]);
    expectExit(out, 0);
    expect(out.stdout).toMatch(/^✓ graph "changelog-post" v1 is valid: 7 nodes, .* hash \w{12}/);
    expect(out.stderr).toBe('');
  });

  it('lists every problem of an invalid graph, each with its fix, and exits 1', async () => {
    const out = await sandbox().waymark(['validate', fixture('invalid.ts')]);
    expectExit(out, 1);
    expect(out.lines[0]).toBe('✗ graph "broken" has 5 problem(s):');
    for (const code of problems) expect(out.stdout).toContain(code);
    expect(out.stdout.match(/ {4}fix: /g)).toHaveLength(5);
  });

  it('--json prints one validation value with every diagnostic as data', async () => {
    const out = await sandbox().waymark(['--json', 'validate', fixture('invalid.ts')]);
    expectExit(out, 1);
    const validation = jsonOf(out, 'validation');
    expect(validation).toMatchObject({ graph: 'broken', valid: false, nodes: 3 });
    expect(validation.file).toBe(fixture('invalid.ts'));
    const diagnostics = validation.diagnostics as { code: string; message: string; hint: string }[];
    expect(new Set(diagnostics.map((d) => d.code))).toEqual(new Set(problems));
    for (const d of diagnostics)
      expect(d).toMatchObject({ message: expect.any(String), hint: expect.any(String) });
  });

  it('lists every problem of a module that calls .compile() at the top level', async () => {
    const out = await sandbox().waymark(['--json', 'validate', fixture('invalid-compiled.ts')]);
    expectExit(out, 1);
    const { diagnostics } = jsonOf(out, 'validation') as unknown as {
      diagnostics: { code: string }[];
    };
    expect(new Set(diagnostics.map((d) => d.code))).toEqual(new Set(problems));
  });
});

describe.concurrent('waymark run on a graph with problems', { timeout: testTimeoutMs }, () => {
  it('refuses to start, shows every diagnostic on stderr, and exits 2', async () => {
    const box = sandbox();
    const out = await box.waymark(['run', fixture('invalid.ts')]);
    expectError(out, 'GRAPH_INVALID', { lines: 'any' });
    expect(out.errLines[0]).toContain('has 5 problem(s)');
    for (const code of problems) expect(out.stderr).toContain(code);
    expect(out.stdout).toBe('');
  });
});

describe.concurrent('waymark graph', { timeout: testTimeoutMs }, () => {
  it('renders Mermaid by default, even with --quiet', async () => {
    const out = await sandbox().waymark(['--quiet', 'graph', changelog]);
    expectExit(out, 0);
    expect(out.stdout).toContain('flowchart');
    expect(out.stdout).toMatch(/fact-check.*-\.->.*draft|n4 -\.->/);
  });

  it('renders DOT with --format dot; --json wraps the text', async () => {
    const out = await sandbox().waymark(['--json', 'graph', changelog, '--format', 'dot']);
    expectExit(out, 0);
    expect(jsonLines(out)).toHaveLength(1);
    const rendered = jsonOf(out, 'graph');
    expect(rendered).toMatchObject({ graph: 'changelog-post', format: 'dot' });
    expect(rendered.text).toMatch(/^digraph/m);
  });

  it("--cost notes each node's worst case and draws the worst path; nothing is created for it", async () => {
    const box = sandbox();
    const out = await box.waymark(['graph', changelog, '--cost']);
    expectExit(out, 0);
    expect(out.stdout).toContain(
      'n3["draft (model, visits ≤ 4)<br/>≤ 4× · 36 calls · 120k tok · $0.072"]',
    );
    expect(out.stdout).toContain('n6["publish (effect)<br/>≤ 1×"]');
    // The worst case loops draft and fact-check at their caps: every link on it is drawn.
    expect(out.stdout).toMatch(/^ {2}linkStyle 0,1,2,3,4,5,6,7,8,9 stroke:#c2410c/m);
    const dot = await box.waymark(['graph', changelog, '--cost', '--format', 'dot']);
    expect(dot.stdout).toContain(
      '"n1" [label="select (model)\\n≤ 1× · 9 calls · 18k tok · $0.011"];',
    );
    expect(existsSync(box.db)).toBe(false);
  });

  it('--cost adds what earlier runs of the graph spent, from the database', async () => {
    const box = sandbox();
    const billed = fixture('billed.ts');
    expectExit(await box.waymark(['run', billed]), 0);

    const out = await box.waymark(['graph', billed, '--cost']);

    expectExit(out, 0);
    // No spend declared: the bound has none, and says so; the median run spent 1.5k tokens.
    expect(out.stdout).toContain(
      'draft (model)<br/>≤ 1× · ∞ calls · ∞ tok · $∞ · ~ 1.5k tok · $0.0005',
    );
    expect(out.stdout).toContain(
      'check (model)<br/>≤ 1× · ∞ calls · ∞ tok · $∞ · ~ 1k tok · $0.0002',
    );
  });

  it('refuses an unknown --format with exit 2', async () => {
    const out = await sandbox().waymark(['graph', changelog, '--format', 'svg']);
    expectError(out, 'USAGE_INVALID');
    expect(out.errLines[0]).toContain('--format svg');
  });
});
