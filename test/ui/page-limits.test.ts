import { expect, it, vi } from 'vitest';
import { z } from 'zod';
import { END, enqueue, graph } from '../../src/index.js';
import { describeBrowser, screenshot } from './fixtures/browser.js';
import { servedPage } from './fixtures/served-page.js';

// The page of a run queued behind its graph's concurrency limit says so: its key, the limit,
// its place in line and since when; nothing of it has run.

vi.setConfig({ testTimeout: 30_000 });

const limited = graph('limited-page', {
  state: z.object({ customer: z.string(), done: z.boolean().default(false) }),
  limits: { key: (input) => input.customer, concurrency: 1 },
})
  .node('work', () => ({ done: true }))
  .edge('work', END)
  .entry('work')
  .compile();

describeBrowser('the web page of a queued run', () => {
  const { open } = servedPage('limits', [limited], async (store) => {
    // No worker runs here: the first holds the slot, the second waits queued behind it.
    await enqueue(store, limited, { customer: 'acme' }, { runId: 'first' });
    await enqueue(store, limited, { customer: 'acme' }, { runId: 'second' });
  });

  it('shows a queued run as waiting, with its key, the limit and its place in line', async () => {
    const page = await open('#/runs/second');
    await page.getByTestId('run-status').filter({ hasText: 'waiting' }).waitFor();
    const queued = page.getByTestId('run-queued');
    await queued.waitFor();
    expect(await queued.textContent()).toMatch(
      /^queued for key acme: at most 1 at once, number 1 in line since .+; it starts when a run of its key stops running$/,
    );
    await screenshot(page, 'run-queued');
    await page.close();
  });

  it('shows no queue on the run that holds the slot', async () => {
    const page = await open('#/runs/first');
    await page.getByTestId('run-status').waitFor();
    await page.locator('.run-head h1').waitFor();
    expect(await page.getByTestId('run-queued').count()).toBe(0);
    await page.close();
  });
});
