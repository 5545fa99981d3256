import { describe, expect, it } from 'vitest';
import { expectError, expectExit, fixture, jsonOf, sandbox, testTimeoutMs } from './support.js';

const cached = fixture('cached.ts');

describe.concurrent('a cached node on the command line', () => {
  it(
    'a run in another process takes the cached output; clear-cache forgets it; a node without cache is refused',
    async () => {
      const box = sandbox();
      const forecast = async (runId: string) => {
        expectExit(await box.waymark(['run', cached, '--run-id', runId]), 0);
        return jsonOf(await box.waymark(['--json', 'show', runId]), 'run').state as {
          forecast: string;
        };
      };
      const first = await forecast('a');
      expect(await forecast('b')).toEqual(first);

      const cleared = await box.waymark(['clear-cache', cached, '--node', 'lookup']);
      expectExit(cleared, 0);
      expect(cleared.stdout).toContain('forgot 1 cached output(s) of node "lookup"');
      expect(await forecast('c')).not.toEqual(first);

      const refused = await box.waymark(['clear-cache', cached, '--node', 'nope']);
      expectError(refused, 'OPTIONS_INVALID', { lines: 'any' });
    },
    testTimeoutMs,
  );
});
