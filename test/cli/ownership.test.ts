// One owner per run, as the command shows it: a run another terminal drives now is listed as
// running and refused to a second `resume` (RUN_OWNED, naming its owner); once that process is
// killed, the same run is listed as interrupted and `resume` takes it over at once.
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import {
  bin,
  expectError,
  expectExit,
  fixture,
  jsonOf,
  type Sandbox,
  sandbox,
  testTimeoutMs,
} from './support.js';

/** `waymark run slow.ts` in the background, returned once its second step is running. */
async function driving(box: Sandbox, runId: string) {
  const child = spawn(
    process.execPath,
    [bin, '--db', box.db, 'run', fixture('slow.ts'), '--run-id', runId],
    { cwd: box.dir, env: { ...process.env, NO_COLOR: '1', FIXTURE_STEP_MS: '4000' } },
  );
  let stdout = '';
  const ended = new Promise((resolve) => child.on('exit', resolve));
  await new Promise<void>((resolve) =>
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      if (stdout.includes('▶ two:1')) resolve();
    }),
  );
  const kill = async () => {
    child.kill('SIGKILL');
    await ended;
  };
  return { pid: child.pid!, kill };
}

describe('a run driven in another terminal', { timeout: testTimeoutMs }, () => {
  it('is running while its process lives, interrupted once it is killed, and resumed at once then', async () => {
    const box = sandbox();
    const other = await driving(box, 'r');

    const listed = await box.waymark(['ls']);
    expect(listed.lines[0]).toMatch(/^r +running +slow /);
    const shown = await box.waymark(['show', 'r']);
    expect(shown.lines).toContainEqual(
      expect.stringMatching(
        new RegExp(`^owner +driven by .* \\(pid ${other.pid}\\), lease until `),
      ),
    );
    const json = jsonOf(await box.waymark(['--json', 'ls']), 'runs');
    expect(json.runs).toMatchObject([
      { runId: 'r', status: 'running', live: true, lease: { pid: other.pid, live: true } },
    ]);

    const refused = await box.waymark(['resume', 'r']);
    expectError(refused, 'RUN_OWNED');
    expect(refused.errLines.join('\n')).toContain(`(pid ${other.pid})`);

    await other.kill();
    const after = await box.waymark(['ls']);
    expect(after.lines[0]).toMatch(/^r +interrupted +slow /);
    expect(jsonOf(await box.waymark(['--json', 'show', 'r']), 'run')).toMatchObject({
      status: 'running',
      live: false,
    });

    const resumed = await box.waymark(['resume', 'r'], { env: { FIXTURE_STEP_MS: '10' } });
    expectExit(resumed, 0);
    expect((await box.waymark(['ls'])).lines[0]).toMatch(/^r +succeeded /);
  });
});
