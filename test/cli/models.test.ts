import { describe, expect, it } from 'vitest';
import {
  expectError,
  expectExit,
  fixture,
  jsonLines,
  jsonOf,
  sandbox,
  testTimeoutMs,
} from './support.js';

const metered = fixture('metered.ts');

describe.concurrent('model usage, quarantine and --model on the command line', () => {
  it(
    'run says which models the model nodes use, and each attempt line shows its tokens',
    async () => {
      const box = sandbox();
      const out = await box.waymark(['run', metered, '--run-id', 'm']);
      expectExit(out, 0);
      expect(out.stdout).toContain("models: audit use the graph's own models");
      expect(out.stdout).toMatch(/✓ audit:1 \d+ ms, 812 in \/ 164 out tokens, scripted:auditor/);

      const trace = await box.waymark(['trace', 'm']);
      expect(trace.stdout).toContain('812 in / 164 out tokens');
      expect(trace.stdout).toContain('812 in / 164 out model tokens');

      const show = await box.waymark(['show', 'm']);
      expect(show.stdout).toContain('spent    812 in / 164 out tokens');
      expect(show.stdout).toContain('quarantine 1 output(s)');
      expect(show.stdout).toContain('audit:1: line-out-of-range: {"line":999}');

      const json = jsonOf(await box.waymark(['--json', 'show', 'm']), 'run');
      expect(json.quarantine).toEqual([
        {
          node: 'audit',
          activation: 'audit:1',
          output: { line: 999 },
          reasons: ['line-out-of-range'],
        },
      ]);
      expect(json.spent).toEqual({ inputTokens: 812, outputTokens: 164, costUsd: 0 });
      expect(json.state).toMatchObject({ findings: [{ line: 3 }] });
    },
    testTimeoutMs,
  );

  it(
    'an input the graph refuses is refused before the models line, which names no examples',
    async () => {
      const box = sandbox();
      const out = await box.waymark(['run', metered, '--input', '{"nope":1}', '--run-id', 'x']);
      expectError(out, 'INPUT_INVALID', { lines: 'any' });
      expect(out.stdout).not.toMatch(/models:/);
      const ok = await box.waymark(['run', metered, '--run-id', 'm']);
      expectExit(ok, 0);
      expect(ok.stdout).not.toMatch(/examples/);
    },
    testTimeoutMs,
  );

  it(
    '--model reaches every model node and stays with the run; a bad name or budget is refused',
    async () => {
      const box = sandbox();
      const out = await box.waymark([
        '--json',
        'run',
        metered,
        '--run-id',
        'm',
        '--model',
        'openai:gpt-4o-mini',
        '--max-tokens',
        '5000',
      ]);
      expectExit(out, 0);
      const lines = jsonLines(out) as { type: string; usage?: { model?: string } }[];
      expect(lines.find((l) => l.type === 'models')).toEqual({
        type: 'models',
        nodes: ['audit'],
        model: 'openai:gpt-4o-mini',
      });
      expect(lines.find((l) => l.type === 'attempt-ended')?.usage?.model).toBe(
        'openai:gpt-4o-mini',
      );
      const show = jsonOf(await box.waymark(['--json', 'show', 'm']), 'run');
      expect(show.limits).toMatchObject({ model: 'openai:gpt-4o-mini', maxTokens: 5000 });

      expectError(await box.waymark(['run', metered, '--model', 'gpt-4o']), 'OPTIONS_INVALID');
      expectError(await box.waymark(['run', metered, '--max-cost', 'lots']), 'USAGE_INVALID');
    },
    testTimeoutMs,
  );
});
