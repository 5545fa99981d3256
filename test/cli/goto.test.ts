import { describe, expect, it } from 'vitest';
import { expectError, expectExit, fixture, jsonOf, sandbox, testTimeoutMs } from './support.js';

const flaky = fixture('flaky.ts');
const review = fixture('review.ts');

describe('moving a run from the command line: resume --goto, patch --as-node', () => {
  it(
    'resume --goto moves a failed run to a node first; a node the graph lacks is GOTO_INVALID',
    async () => {
      const box = sandbox();
      expectExit(
        await box.waymark(['run', flaky, '--run-id', 'f'], { env: { FIXTURE_FAIL: '1' } }),
        1,
      );

      const wrong = await box.waymark(['resume', 'f', '--goto', 'prepair']);
      expectError(wrong, 'GOTO_INVALID', { lines: 'any' });
      expect(wrong.stderr + wrong.stdout).toContain('prepare');

      const moved = await box.waymark(['resume', 'f', '--goto', 'prepare']);
      expectExit(moved, 0);
      expect(moved.stdout).toContain('moving it to prepare first');
      const shown = jsonOf(await box.waymark(['--json', 'show', 'f']), 'run');
      expect(shown.status).toBe('succeeded');
      // prepare ran again after the move: n counts its runs.
      expect(shown.state).toMatchObject({ n: 2, done: true });
    },
    testTimeoutMs,
  );

  it(
    "patch --as-node stands in for a person's answer: the run goes on after that node",
    async () => {
      const box = sandbox();
      expectExit(
        await box.waymark(['run', review, '--input', '{"title":"T"}', '--run-id', 'r']),
        3,
      );

      const patched = await box.waymark([
        'patch',
        'r',
        '--set',
        '{"approved":true}',
        '--reason',
        'approved on the phone',
        '--as-node',
        'review',
      ]);
      expectExit(patched, 0);
      expect(patched.stdout).toContain('after review');
      // What follows review is rate, another person: the run waits there now.
      const resumed = await box.waymark(['resume', 'r']);
      expectExit(resumed, 3);
      const shown = jsonOf(await box.waymark(['--json', 'show', 'r']), 'run');
      expect(shown.state).toMatchObject({ approved: true });
      expect((shown.waits as { open: { node: string }[] }).open.map((w) => w.node)).toEqual([
        'rate',
      ]);
    },
    testTimeoutMs,
  );
});
