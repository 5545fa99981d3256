import { expect, it, vi } from 'vitest';
import { z } from 'zod';
import { graph, person, run } from '../../src/index.js';
import { describeBrowser, screenshot } from './fixtures/browser.js';
import { servedPage } from './fixtures/served-page.js';

// Deleting a run from `waymark ui`'s page, in a real (headless) Chromium over the real server:
// a finished run's view offers Delete, asked twice; a waiting run's offers none.

type Dom = { location: { hash: string } };

vi.setConfig({ testTimeout: 30_000 });
const poll = <T>(read: () => T | Promise<T>) => expect.poll(read, { timeout: 10_000 });

const done = graph('page-done', { state: z.object({ n: z.number().default(0) }) })
  .node('step', (s) => ({ n: s.n + 1 }), { terminal: true })
  .entry('step')
  .compile();

const asking = graph('page-asking', { state: z.object({ ok: z.boolean().default(false) }) })
  .node('ask', person({ prompt: 'ok?', answer: z.object({ ok: z.boolean() }) }), {
    terminal: true,
  })
  .entry('ask')
  .compile();

describeBrowser('deleting a run from the web page', () => {
  const served = servedPage('retention', [done, asking], (store) =>
    Promise.all([
      run(done, {}, { store, runId: 'finished-run' }),
      run(asking, {}, { store, runId: 'waiting-run' }),
    ]),
  );

  it("a waiting run's view offers no Delete", async () => {
    const page = await served.open('/runs/waiting-run');
    await page.getByRole('button', { name: 'Cancel' }).waitFor();
    expect(await page.getByRole('button', { name: 'Delete…' }).count()).toBe(0);
    await page.close();
  });

  it("a finished run's view deletes it, asked twice, and goes back to the runs", async () => {
    const page = await served.open('/runs/finished-run');
    await page.getByRole('button', { name: 'Delete…' }).click();
    await page.getByRole('button', { name: 'Delete for good' }).waitFor();
    await screenshot(page, 'run-delete');
    await page.getByRole('button', { name: 'Delete for good' }).click();
    await poll(() => page.evaluate(() => (globalThis as unknown as Dom).location.hash)).toBe(
      '#/runs',
    );
    await poll(() => served.store.getRun('finished-run')).toBeUndefined();
    await poll(() => page.locator('tr[data-run]').count()).toBe(1);
    expect(await page.locator('tr[data-run]').getAttribute('data-run')).toBe('waiting-run');
    await page.close();
  });
});
