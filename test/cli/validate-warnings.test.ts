// `waymark validate` with warnings: they are shown, and only errors fail the command.
import { describe, expect, it } from 'vitest';
import { expectExit, fixture, jsonOf, sandbox, testTimeoutMs } from './support.js';

describe.concurrent('waymark validate with warnings', { timeout: testTimeoutMs }, () => {
  it('says the graph is valid, lists each warning with its fix, and exits 0', async () => {
    const out = await sandbox().waymark(['validate', fixture('warnings.ts')]);

    expectExit(out, 0);
    expect(out.lines[0]).toMatch(/^✓ graph "warned" v1 is valid: 4 nodes/);
    expect(out.lines[1]).toBe('! 2 warning(s):');
    expect(out.stdout).toContain('warning READS_UNDECLARED style: node "style" runs in a parallel');
    expect(out.stdout).toContain(
      'warning WRITES_UNDECLARED style: node "style" runs in a parallel',
    );
    expect(out.stdout.match(/ {4}fix: /g)).toHaveLength(2);
    expect(out.stderr).toBe('');
  });

  it('--json says valid, with every diagnostic carrying its severity', async () => {
    const out = await sandbox().waymark(['--json', 'validate', fixture('warnings.ts')]);

    expectExit(out, 0);
    const validation = jsonOf(out, 'validation');
    expect(validation).toMatchObject({ graph: 'warned', valid: true, nodes: 4 });
    expect(validation.hash).toEqual(expect.any(String));
    expect(validation.diagnostics).toEqual([
      expect.objectContaining({ code: 'READS_UNDECLARED', severity: 'warning', node: 'style' }),
      expect.objectContaining({ code: 'WRITES_UNDECLARED', severity: 'warning', node: 'style' }),
    ]);
  });

  it('errors still fail it with exit 1, and --json marks them severity "error"', async () => {
    const out = await sandbox().waymark(['--json', 'validate', fixture('invalid.ts')]);

    expectExit(out, 1);
    const validation = jsonOf(out, 'validation');
    expect(validation.valid).toBe(false);
    const diagnostics = validation.diagnostics as { severity: string }[];
    expect(diagnostics.length).toBeGreaterThan(0);
    for (const d of diagnostics) expect(d.severity).toBe('error');
  });

  it('a graph with only warnings runs', async () => {
    const out = await sandbox().waymark(['--json', 'run', fixture('warnings.ts')]);

    expectExit(out, 0);
  });
});
