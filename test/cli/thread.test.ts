import { describe, expect, it } from 'vitest';
import {
  expectError,
  expectExit,
  fixture,
  type JsonLine,
  jsonLines,
  reviewWaiting,
  sandbox,
  streamEventsOf,
  testTimeoutMs,
} from './support.js';

// `waymark continue` and `ls --thread`: a conversation as a thread of runs.

const turn = (text: string) => JSON.stringify({ messages: [{ role: 'user', text }] });

describe('waymark continue', () => {
  it(
    'holds a three-turn chat on the command line, and ls --thread lists its runs, newest first',
    async () => {
      const box = sandbox();
      expectExit(
        await box.waymark(['run', fixture('chat.ts'), '--input', turn('hello'), '--run-id', 'c1']),
        0,
      );
      const second = await box.waymark([
        'continue',
        'c1',
        '--input',
        turn('how are you?'),
        '--run-id',
        'c2',
      ]);
      expectExit(second, 0);
      expect(second.stdout).toMatch(/run c2 continues the thread of run c1/);
      expect(second.stdout).toMatch(/thread c1: `waymark ls --thread c1 --db \S+` lists its runs/);
      expectExit(
        await box.waymark(['continue', 'c2', '--input', turn('bye'), '--run-id', 'c3']),
        0,
      );
      const shown = (jsonLines(await box.waymark(['--json', 'show', 'c3'])) as JsonLine[])[0]!;
      expect((shown.state as { turns: number }).turns).toBe(3);
      expect((shown.state as { messages: unknown[] }).messages).toHaveLength(6);
      const listed = (
        jsonLines(await box.waymark(['--json', 'ls', '--thread', 'c1'])) as JsonLine[]
      )[0]!;
      expect((listed.runs as { runId: string }[]).map((r) => r.runId)).toEqual(['c3', 'c2', 'c1']);
      // A run of another thread is not listed.
      expectExit(
        await box.waymark(['run', fixture('chat.ts'), '--input', turn('hi'), '--run-id', 'd1']),
        0,
      );
      const again = (
        jsonLines(
          await box.waymark(['--json', 'ls', '--thread', 'c1', '--limit', '2']),
        ) as JsonLine[]
      )[0]!;
      expect((again.runs as { runId: string }[]).map((r) => r.runId)).toEqual(['c3', 'c2']);
    },
    testTimeoutMs,
  );

  it(
    'refuses to continue a run that waits, and input that is not state fields',
    async () => {
      const box = sandbox();
      await reviewWaiting(box, 'w');
      expectError(await box.waymark(['continue', 'w', '--input', '{}']), 'RUN_NOT_CONTINUABLE');
      expectExit(
        await box.waymark(['run', fixture('chat.ts'), '--input', turn('hello'), '--run-id', 'c1']),
        0,
      );
      expectError(await box.waymark(['continue', 'c1', '--input', '[1]']), 'USAGE_INVALID');
      expectError(
        await box.waymark(['continue', 'c1', '--input', '{"mood":"happy"}']),
        'OPTIONS_INVALID',
      );
      const listed = (jsonLines(await box.waymark(['--json', 'ls'])) as JsonLine[])[0]!;
      expect((listed.runs as unknown[]).length).toBe(2);
    },
    testTimeoutMs,
  );
});

describe('waymark patch', () => {
  it(
    "changes a waiting run's state with who and why; the run goes on from it",
    async () => {
      const box = sandbox();
      await reviewWaiting(box, 'w');
      const out = await box.waymark([
        'patch',
        'w',
        '--set',
        '{"title":"Better"}',
        '--reason',
        'a typo',
        '--by',
        'ana',
      ]);
      expectExit(out, 0);
      expect(out.lines[0]).toBe('run w: title set by ana (a typo)');
      expect(out.lines[1]).toMatch(
        /^it is waiting, as it was: `waymark show w --db \S+` shows its open wait$/,
      );
      const events = streamEventsOf(await box.waymark(['--json', 'watch', 'w', '--no-follow']));
      expect(events.find((e) => e.type === 'state.patched')).toMatchObject({
        by: 'ana',
        reason: 'a typo',
      });
      const shown = (jsonLines(await box.waymark(['--json', 'show', 'w'])) as JsonLine[])[0]!;
      expect(shown.state).toMatchObject({ title: 'Better' });
    },
    testTimeoutMs,
  );

  it(
    'refuses a finished run, a bad field and a --set that is not an object',
    async () => {
      const box = sandbox();
      expectExit(
        await box.waymark(['run', fixture('chat.ts'), '--input', turn('hello'), '--run-id', 'c1']),
        0,
      );
      expectError(
        await box.waymark(['patch', 'c1', '--set', '{"turns":5}', '--reason', 'x']),
        'RUN_NOT_PATCHABLE',
      );
      await reviewWaiting(box, 'w');
      expectError(
        await box.waymark(['patch', 'w', '--set', '{"title":""}', '--reason', 'x']),
        'OPTIONS_INVALID',
      );
      expectError(
        await box.waymark(['patch', 'w', '--set', '"title"', '--reason', 'x']),
        'USAGE_INVALID',
      );
    },
    testTimeoutMs,
  );
});
