import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { bin, example, sandbox, testTimeoutMs } from './support.js';

// On a terminal, a spinner names the nodes still running between the lines. util-linux `script`
// gives the command a real pseudo-terminal; the terminal's width is set with stty first.
const hasScript = spawnSync('script', ['--version']).status === 0;

function onTerminal(dir: string, db: string, columns: number): string {
  const graph = example('changelog-post/graph.ts');
  const input = example('changelog-post/input.json');
  const command = `stty cols ${columns} rows 40; "${process.execPath}" "${bin}" --db "${db}" run "${graph}" --input-file "${input}"`;
  const result = spawnSync('script', ['-qec', command, '/dev/null'], {
    cwd: dir,
    encoding: 'utf8',
    env: { ...process.env, WAYMARK_CMS_FILE: `${dir}/cms.json`, NO_COLOR: '1' },
    timeout: 30_000,
    maxBuffer: 1024 * 1024,
  });
  // The story stops at the editor's approval: exit code 3, waiting.
  expect(result.status).toBe(3);
  return result.stdout;
}

describe.skipIf(!hasScript)('the run command on a terminal', () => {
  it(
    'draws a spinner naming the running node between the start and end lines',
    () => {
      const box = sandbox();
      const out = onTerminal(box.dir, box.db, 100);
      expect(out).toContain('running fetch:1');
      expect(out).toContain('✓ fetch:1');
      expect(out).toMatch(/waiting after \d+ step/);
    },
    testTimeoutMs,
  );

  it(
    'falls back to plain lines on a terminal that reports no width, instead of flooding it',
    () => {
      const box = sandbox();
      const out = onTerminal(box.dir, box.db, 0);
      expect(out).not.toContain('running fetch:1');
      expect(out).toContain('✓ fetch:1');
      expect(out.length).toBeLessThan(20_000);
    },
    testTimeoutMs,
  );
});
