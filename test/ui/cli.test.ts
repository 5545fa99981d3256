import { spawn } from 'node:child_process';
import { build } from 'vite';
import { beforeAll, describe, expect, it } from 'vitest';
import { run } from '../../src/index.js';
import { uiBuilt } from '../../src/server/ui-assets.js';
import { serve } from '../../src/server.js';
import { SqliteStore } from '../../src/sqlite.js';
import slow from '../cli/fixtures/slow.js';
import {
  bin,
  expectExit,
  fixture,
  type JsonLine,
  reviewWaiting,
  sandbox,
  testTimeoutMs,
} from '../cli/support.js';

// `waymark ui` as a person or a script starts it: its help, the URL with the token in its
// fragment, the page served without the token and the API with it, the graphs the runs recorded
// when --graphs is not given, and a clean stop on SIGTERM.

beforeAll(async () => {
  // The command serves dist/ui, which `npm run build` makes (CI builds before it tests).
  if (!uiBuilt()) await build({ configFile: 'vite.ui.config.ts', logLevel: 'error' });
}, 120_000);

/** `waymark --json ui ...` until its first line, handed to `check`, then stopped with SIGTERM. */
function started(
  db: string,
  cwd: string,
  args: readonly string[],
  check: (line: JsonLine) => Promise<void>,
): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, '--db', db, '--json', 'ui', ...args], {
      cwd,
      env: { ...process.env, NO_COLOR: '1', CI: '' },
    });
    let stdout = '';
    let stderr = '';
    let asked = false;
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      if (asked || !stdout.includes('\n')) return;
      asked = true;
      check(JSON.parse(stdout.split('\n')[0]!) as JsonLine).then(
        () => child.kill('SIGTERM'),
        (error: unknown) => {
          child.kill('SIGTERM');
          reject(error);
        },
      );
    });
    child.on('exit', (code) => resolve({ code, stderr }));
  });
}

describe('waymark ui', { timeout: testTimeoutMs }, () => {
  it('has --help with an example', async () => {
    const out = await sandbox().waymark(['ui', '--help'], { noDb: true });
    expectExit(out, 0);
    expect(out.stdout).toContain('Usage: waymark ui [options]');
    expect(out.stdout).toContain('--graphs <module or folder>');
    expect(out.stdout).toContain('#token=');
    expect(out.stdout).toContain('$ waymark ui --graphs ./graphs');
  });

  it('prints the URL with the token in its fragment; the page is served without it, the API only with it', async () => {
    const box = sandbox();
    const ended = await started(
      box.db,
      box.dir,
      ['--graphs', fixture('review.ts'), '--no-open'],
      async (line) => {
        expect(line.type, JSON.stringify(line)).toBe('serving-ui');
        const url = new URL(line.url as string);
        expect(url.hostname).toBe('127.0.0.1');
        expect(url.pathname).toBe('/ui/');
        expect(url.hash).toBe(`#token=${line.token}`);

        const page = await fetch(`${url.origin}/ui/`);
        expect(page.status).toBe(200);
        expect(page.headers.get('content-type')).toContain('text/html');
        expect(await page.text()).toContain('<div id="root">');
        expect((await fetch(`${url.origin}/graphs`)).status).toBe(401);
        const graphs = await fetch(`${url.origin}/graphs`, {
          headers: { authorization: `Bearer ${line.token}` },
        });
        expect(((await graphs.json()) as { graphs: { name: string }[] }).graphs).toEqual([
          expect.objectContaining({ name: 'review' }),
        ]);
      },
    );
    expect(ended).toEqual({ code: 0, stderr: '' });
  });

  it('serves the graphs the runs recorded when --graphs is not given', async () => {
    const box = sandbox();
    await reviewWaiting(box, 'ui-1');
    const ended = await started(box.db, box.dir, ['--no-open'], async (line) => {
      expect(line.type, JSON.stringify(line)).toBe('serving-ui');
      const { origin } = new URL(line.url as string);
      const run = await fetch(`${origin}/runs/ui-1`, {
        headers: { authorization: `Bearer ${line.token}` },
      });
      expect(run.status).toBe(200);
      expect(((await run.json()) as { status: string }).status).toBe('waiting');
    });
    expect(ended.code).toBe(0);
  });

  it('tells a run whose process died (interrupted) from a live one, in the watched listing', async () => {
    const box = sandbox();
    const child = spawn(process.execPath, [bin, '--db', box.db, 'run', fixture('slow.ts')], {
      cwd: box.dir,
      env: { ...process.env, NO_COLOR: '1', FIXTURE_STEP_MS: '400' },
    });
    await new Promise<void>((resolve) => {
      let out = '';
      child.stdout.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        if (out.includes('▶ two:1')) resolve();
      });
    });
    // Killed mid-step: its lease is held by an owner on this host that is gone.
    child.kill('SIGKILL');
    await new Promise((resolve) => child.on('exit', resolve));
    const store = new SqliteStore({ path: box.db });
    const served = await serve({ store, graphs: [], token: 't' });
    // And one this process drives while the listing is read.
    const live = run(slow, {}, { store, runId: 'driven' });
    try {
      const stop = new AbortController();
      const res = await fetch(`${served.url}/watch/runs`, {
        headers: { authorization: 'Bearer t' },
        signal: stop.signal,
      });
      const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
      let text = '';
      while (!text.includes('\n\n')) text += (await reader.read()).value ?? '';
      stop.abort();
      const { runs } = JSON.parse(/data: (.*)/.exec(text)![1]!) as {
        runs: { runId: string; status: string; live: boolean }[];
      };
      expect(runs).toHaveLength(2);
      expect(runs).toContainEqual(
        expect.objectContaining({ runId: 'driven', status: 'running', live: true }),
      );
      expect(runs).toContainEqual(expect.objectContaining({ status: 'running', live: false }));
    } finally {
      await live;
      await served.close();
      await store.close();
    }
  });

  it('refuses a port that is no port, before it serves anything', async () => {
    const out = await sandbox().waymark(['ui', '--port', 'eighty']);
    expectExit(out, 2);
    expect(out.stderr).toContain('USAGE_INVALID');
  });
});
