import { describe, expect, it } from 'vitest';
import {
  expectError,
  expectExit,
  expectJsonError,
  fixture,
  type JsonLine,
  jsonLines,
  reviewWaiting,
  sandbox,
  streamEventsOf,
  testTimeoutMs,
} from './support.js';

// `waymark watch`: a run's stream from another terminal, to its end.

describe('waymark watch', () => {
  it(
    'follows a waiting run while another process answers it, and exits with its exit code',
    async () => {
      const box = sandbox();
      await reviewWaiting(box, 'w');
      const watching = box.waymark(['--json', 'watch', 'w']);
      await new Promise((resolve) => setTimeout(resolve, 300));
      expectExit(await box.waymark(['approve', 'w', '--by', 'ed']), 3);
      expectExit(await box.waymark(['answer', 'w', '--value', '{"stars":4}']), 0);
      const out = await watching;
      expectExit(out, 0);
      const lines = jsonLines(out) as JsonLine[];
      const events = lines.filter((l) => l.type === 'stream-event').map((l) => l.event as JsonLine);
      expect(events[0]).toMatchObject({ type: 'run', status: 'running', cause: 'started' });
      expect(events.filter((e) => e.type === 'wait.answered')).toHaveLength(2);
      expect(events.at(-1)).toMatchObject({ type: 'run', status: 'succeeded' });
      expect(lines.at(-1)).toMatchObject({
        type: 'watched',
        runId: 'w',
        status: 'succeeded',
        stopped: false,
      });
      expect(lines.at(-1)?.events).toBe(events.length);

      // The same stream read again after any offset is what followed it.
      const middle = events[4]!.offset as string;
      const again = await box.waymark(['--json', 'watch', 'w', '--after', middle]);
      expectExit(again, 0);
      const rest = (jsonLines(again) as JsonLine[]).filter((l) => l.type === 'stream-event');
      expect(rest.map((l) => (l.event as JsonLine).offset)).toEqual(
        events.slice(5).map((e) => e.offset),
      );
    },
    testTimeoutMs,
  );

  it(
    '--no-follow prints what is recorded and exits with how the run stands: 3 while it waits',
    async () => {
      const box = sandbox();
      await reviewWaiting(box, 'w');
      const out = await box.waymark(['watch', 'w', '--no-follow']);
      expectExit(out, 3);
      expect(out.lines[0]).toMatch(/^1\.0 +\S+ run running \(started\)$/);
      expect(out.lines.at(-1)).toMatch(/run waiting$/);
      expect(out.stdout).toMatch(/waits: Publish "T \(0 note\(s\) applied\)"\?/);
    },
    testTimeoutMs,
  );

  it(
    'refuses an offset that is not one and a run that is not there, with their codes',
    async () => {
      const box = sandbox();
      await reviewWaiting(box, 'w');
      expectError(await box.waymark(['watch', 'w', '--after', 'soon']), 'OPTIONS_INVALID');
      expectJsonError(await box.waymark(['--json', 'watch', 'nope']), 'RUN_NOT_FOUND');
    },
    testTimeoutMs,
  );
});

describe('waymark show --at', () => {
  it(
    'gives the state after a step, and with --diff what that step changed',
    async () => {
      const box = sandbox();
      await reviewWaiting(box, 'w');
      expectExit(await box.waymark(['approve', 'w', '--by', 'ed']), 3);
      const input = await box.waymark(['--json', 'show', 'w', '--at', '0']);
      expectExit(input, 0);
      expect((jsonLines(input) as JsonLine[])[0]).toMatchObject({
        type: 'run-at',
        seq: 0,
        event: 'created',
        state: { title: 'T', draft: '', approved: false },
      });
      const events = streamEventsOf(await box.waymark(['--json', 'watch', 'w', '--no-follow']));
      const answered = events.find((e) => e.type === 'wait.answered')!;
      const out = await box.waymark([
        '--json',
        'show',
        'w',
        '--at',
        String(answered.seq),
        '--diff',
      ]);
      expectExit(out, 0);
      expect((jsonLines(out) as JsonLine[])[0]).toMatchObject({
        event: 'answered',
        activation: 'review:1',
        changed: [{ field: 'approved', before: false, after: true }],
      });
      const human = await box.waymark(['show', 'w', '--at', String(answered.seq), '--diff']);
      expect(human.stdout).toMatch(/changed {2}approved\n {2}approved\n {4}- false\n {4}\+ true/);
    },
    testTimeoutMs,
  );

  it(
    'refuses a step the run does not have, and --diff without --at',
    async () => {
      const box = sandbox();
      await reviewWaiting(box, 'w');
      expectError(await box.waymark(['show', 'w', '--at', '99']), 'USAGE_INVALID');
      expectError(await box.waymark(['show', 'w', '--at', 'last']), 'USAGE_INVALID');
      expectError(await box.waymark(['show', 'w', '--diff']), 'USAGE_INVALID');
    },
    testTimeoutMs,
  );
});

describe('waymark run --pause-before / --pause-after', () => {
  it(
    'waits at the breakpoint, says what it stopped, and a resume runs it',
    async () => {
      const box = sandbox();
      const out = await box.waymark([
        'run',
        fixture('flaky.ts'),
        '--run-id',
        'p',
        '--pause-before',
        'work',
      ]);
      expectExit(out, 3);
      expect(out.stdout).toMatch(/^paused: {6}work:1 \(a breakpoint/m);
      expect(out.stdout).toMatch(
        /^next: {8}waymark resume p --db \S+ {2}\(runs what the breakpoint stopped\)$/m,
      );
      const events = streamEventsOf(await box.waymark(['--json', 'watch', 'p', '--no-follow']));
      expect(events.find((e) => e.type === 'activation.paused')).toMatchObject({
        activation: 'work:1',
      });
      expectExit(await box.waymark(['resume', 'p']), 0);
      expectError(
        await box.waymark(['run', fixture('flaky.ts'), '--pause-after', 'nope']),
        'OPTIONS_INVALID',
      );
    },
    testTimeoutMs,
  );
});
