// The demo story, through the binary: the changelog-post example fails at fact-check, resumes
// without redoing the four steps before it, waits for the editor, publishes once on approval, and
// a second resume publishes nothing more. Then `npm start` itself.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { example, expectExit, jsonOf, node, sandbox, testTimeoutMs, tsxLoader } from './support.js';

const graph = example('changelog-post/graph.ts');
const input = example('changelog-post/input.json');

describe('the changelog-post example through the waymark command', () => {
  it('fails, resumes, waits for the editor, publishes once', {
    timeout: 2 * testTimeoutMs,
  }, async () => {
    const box = sandbox();
    const run = await box.waymark(['run', graph, '--input-file', input, '--run-id', 'post'], {
      env: { WAYMARK_FAULTS: 'fact-check' },
    });
    expectExit(run, 1);
    expect(run.stdout).toContain('fact-check service unavailable (injected by WAYMARK_FAULTS)');
    expect(run.stdout).toContain('run post failed after 4 step(s)');

    const resumed = await box.waymark(['resume', 'post']);
    expectExit(resumed, 3);
    expect(resumed.stdout).toContain(
      'resuming post (failed): 4 completed step(s) read back from the checkpoints, not run again: fetch:1, select:1, outline:1, draft:1',
    );
    expect(resumed.stdout).not.toMatch(/▶ (fetch|select|outline):/);
    expect(resumed.stdout).toContain('▶ fact-check:1');
    expect(resumed.stdout).toMatch(/waiting: +approve asks/);

    const approved = await box.waymark(['--json', 'approve', 'post', '--by', 'editor@example.com']);
    expectExit(approved, 0);
    expect(jsonOf(approved, 'answered')).toMatchObject({
      answer: { approved: true },
      by: 'editor@example.com',
    });
    expect(jsonOf(approved, 'result')).toMatchObject({ status: 'succeeded' });

    const again = await box.waymark(['resume', 'post']);
    expectExit(again, 0);
    expect(again.stdout).toContain('run post has succeeded already: nothing runs again');
    expect(again.stdout).not.toContain('▶');

    const cms = JSON.parse(readFileSync(box.cms, 'utf8')) as { calls: number; posts: object };
    expect(Object.keys(cms.posts)).toEqual(['post/publish:1/publish']);
    expect(cms.calls).toBe(1);
  });

  it('`npm start` (demo.ts) runs the story to exit 0 and one post', {
    timeout: 2 * testTimeoutMs,
  }, async () => {
    const box = sandbox();
    const out = await node(['--import', tsxLoader, example('changelog-post/demo.ts')], {
      cwd: box.dir,
      env: { WAYMARK_CMS_FILE: box.cms },
    });
    expectExit(out, 0);
    expect(out.stdout).toContain('holds 1 post for this run after 1 publish call(s)');
    // Its runs went to the default database under the directory it ran in.
    expect(existsSync(join(box.dir, '.waymark/waymark.db'))).toBe(true);
  });
});
