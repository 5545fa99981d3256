import { describe, expect, it } from 'vitest';
import { expectExit, fixture, jsonOf, sandbox, testTimeoutMs } from './support.js';

const beating = fixture('beating.ts');

describe('heartbeats in waymark show', () => {
  it(
    'show tells where a node that timed out had got to: the last heartbeat of each step still to run',
    async () => {
      const box = sandbox();
      const ran = await box.waymark(['run', beating, '--run-id', 'b']);
      expectExit(ran, 1);

      const shown = await box.waymark(['show', 'b']);
      expect(shown.stdout).toMatch(/^heartbeat stream:1 attempt 1 at \S+Z: \{"chunk":2\}$/m);
      const json = jsonOf(await box.waymark(['--json', 'show', 'b']), 'run');
      expect(json.heartbeats).toEqual([
        { activation: 'stream:1', attempt: 1, at: expect.any(String), details: { chunk: 2 } },
      ]);
    },
    testTimeoutMs,
  );
});
