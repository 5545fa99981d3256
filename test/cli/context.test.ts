import { describe, expect, it } from 'vitest';
import { expectError, expectExit, fixture, jsonOf, sandbox, testTimeoutMs } from './support.js';

const tenant = fixture('tenant.ts');

describe.concurrent('--context on the command line', () => {
  it(
    'run --context gives every node the run context, show prints it; a bad one is CONTEXT_INVALID',
    async () => {
      const box = sandbox();
      const ok = await box.waymark([
        'run',
        tenant,
        '--context',
        '{"tenant":"acme"}',
        '--run-id',
        'c',
      ]);
      expectExit(ok, 0);

      const shown = await box.waymark(['show', 'c']);
      expect(shown.stdout).toContain('context  {"tenant":"acme"}');
      const json = jsonOf(await box.waymark(['--json', 'show', 'c']), 'run');
      expect(json.state).toEqual({ greeting: 'hello acme' });

      const bad = await box.waymark(['run', tenant, '--context', '{"tenant":1}', '--run-id', 'd']);
      expectError(bad, 'CONTEXT_INVALID', { lines: 'any' });
    },
    testTimeoutMs,
  );
});
