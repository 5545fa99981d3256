// A sleeping run through the command line: `waymark worker` on a SQLite file wakes it when its
// timer is due, and `waymark run --enqueue --wait` follows it through its sleep to its end (a
// run that only sleeps needs nobody, so --wait does not stop there as it does for a person).
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { bin, fixture, jsonOf, sandbox, testTimeoutMs } from './support.js';

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
