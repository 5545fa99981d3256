// Time through the command line. A sleeping run: `waymark worker` on a SQLite file wakes it when
// its timer is due, and `waymark run --enqueue --wait` follows it through its sleep to its end (a
// run that only sleeps needs nobody, so --wait does not stop there as it does for a person). A
// wait with a deadline: `run` and `show` say when it closes.
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { bin, expectExit, fixture, jsonOf, sandbox, testTimeoutMs } from './support.js';

const children = new Set<ChildProcess>();
afterEach(() => {
  for (const child of children) child.kill('SIGKILL');
  children.clear();
});

it(
  'waymark worker on a SQLite file wakes a sleeping run, and run --enqueue --wait follows it to its end',
  async () => {
    const box = sandbox();
    const location = join(box.dir, 'runs.sqlite');
    const env = { FIXTURE_SLEEP: '300ms' };
    const worker = spawn(
      process.execPath,
      [bin, '--store', location, 'worker', '--graphs', fixture('sleepy.ts'), '--poll-ms', '50'],
      { cwd: box.dir, env: { ...process.env, ...env }, stdio: 'ignore' },
    );
    children.add(worker);

    const followed = await box.waymark(
      ['--json', '--store', location, 'run', fixture('sleepy.ts'), '--enqueue', '--wait'],
      { noDb: true, env },
    );

    expect(followed.code).toBe(0);
    expect(jsonOf(followed, 'result')).toMatchObject({
      status: 'succeeded',
      path: ['draft', 'cool-off', 'publish'],
    });
  },
  testTimeoutMs,
);

it(
  'run and show say when a wait with a deadline closes, and show when a sleep wakes',
  async () => {
    const box = sandbox();
    const env = { FIXTURE_TIMEOUT_MS: '86400000' };
    const waiting = await box.waymark(['run', fixture('expiring.ts'), '--run-id', 'w'], { env });
    expectExit(waiting, 3);
    const closes = /closes at (\S+)\)/.exec(
      waiting.lines.find((l) => l.startsWith('waiting:')) ?? '',
    );
    expect(Date.parse(closes?.[1] ?? '') - Date.now()).toBeGreaterThan(86_000_000);
    const shown = await box.waymark(['show', 'w', '--graph', fixture('expiring.ts')], { env });
    expect(shown.lines.find((l) => l.startsWith('waiting '))).toContain(`closes at ${closes?.[1]}`);

    expectExit(await box.waymark(['run', fixture('sleepy.ts'), '--run-id', 's']), 3);
    const slept = await box.waymark(['show', 's']);
    expect(slept.lines.find((l) => l.startsWith('sleeping '))).toMatch(
      /^sleeping cool-off:1 until \d{4}-/,
    );
    const refused = await box.waymark(['resume', 's']);
    expectExit(refused, 2);
    expect(refused.errLines[0]).toMatch(
      /^error RUN_NOT_DUE: run "s" sleeps until .* \(1d 23h from now\)/,
    );
  },
  testTimeoutMs,
);
