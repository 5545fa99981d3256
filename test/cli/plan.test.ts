import { describe, expect, it } from 'vitest';
import { expectExit, fixture, jsonOf, sandbox, testTimeoutMs } from './support.js';

const billed = fixture('billed.ts');

describe('--plan: the price of a resume or a rewind, before anything runs', () => {
  it(
    'resume --plan names what is read back and what runs again with what it re-pays; nothing runs',
    async () => {
      const box = sandbox();
      expectExit(
        await box.waymark(['run', billed, '--run-id', 'b'], { env: { FIXTURE_FAIL: '1' } }),
        1,
      );

      const plan = await box.waymark(['resume', 'b', '--plan']);
      expectExit(plan, 0);
      expect(plan.stdout).toContain('read back 1: draft:1');
      expect(plan.stdout).toMatch(/^runs again check:1 {2}800 in \/ 200 out tokens, \$0\.0002/m);
      expect(plan.stdout).toContain('re-pays  800 in / 200 out tokens, $0.0002');
      const json = jsonOf(await box.waymark(['--json', 'resume', 'b', '--plan']), 'plan');
      expect(json).toMatchObject({
        kind: 'resume',
        readBack: [{ node: 'draft', activation: 'draft:1' }],
        runAgain: [{ node: 'check', activation: 'check:1' }],
        rePays: { inputTokens: 800, outputTokens: 200, costUsd: 0.0002 },
      });
      // Nothing ran: the run is still failed where it was.
      const shown = jsonOf(await box.waymark(['--json', 'show', 'b']), 'run');
      expect(shown.status).toBe('failed');
      expect(shown.steps).toBe(1);
    },
    testTimeoutMs,
  );

  it(
    'rewind --plan runs again what reads a changed field; with nothing changed, all is read back',
    async () => {
      const box = sandbox();
      expectExit(await box.waymark(['run', billed, '--run-id', 'b']), 0);

      const rewind = (...more: string[]) =>
        box.waymark(['--json', 'rewind', 'b', '--to', 'check', ...more, '--plan']);
      // A note in the field check reads: check runs again, draft (before it) is read back.
      const changed = jsonOf(await rewind('--note', 'shorter', '--note-field', 'draft'), 'plan');
      expect(changed).toMatchObject({
        kind: 'rewind',
        readBack: [{ activation: 'draft:1' }],
        runAgain: [{ activation: 'check:1', basis: 'recorded' }],
        rePays: { inputTokens: 800, outputTokens: 200, costUsd: 0.0002 },
      });
      // No change: check's inputs are as recorded, so its output is reused.
      const same = jsonOf(await rewind(), 'plan');
      expect(same).toMatchObject({ runAgain: [], rePays: { inputTokens: 0, outputTokens: 0 } });
      // No new run was made.
      const listed = jsonOf(await box.waymark(['--json', 'ls']), 'runs');
      expect((listed.runs as unknown[]).length).toBe(1);
    },
    testTimeoutMs,
  );
});
