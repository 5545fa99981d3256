import { expect, it, vi } from 'vitest';
import { z } from 'zod';
import { END, graph, run } from '../../src/index.js';
import { describeBrowser, screenshot } from './fixtures/browser.js';
import { servedPage } from './fixtures/served-page.js';

// The page of a run whose attempt its rate limit deferred says so on the activation: queued for
// the resource until its window has room; nothing of it has run.

vi.setConfig({ testTimeout: 30_000 });

const metered = graph('metered-page', { state: z.object({ done: z.boolean().default(false) }) })
  .node('call', () => ({ done: true }), { rateLimit: { resource: 'openai', requestsPerMinute: 1 } })
  .edge('call', END)
  .entry('call')
  .compile();

describeBrowser('the web page of a rate-limited run', () => {
  const { open } = servedPage('rates', [metered], async (store) => {
    // The first takes the minute's one request; the second is deferred, left to a host.
    await run(metered, {}, { store, runId: 'first' });
    await run(metered, {}, { store, runId: 'second', holdSleepsMs: 0 });
  });

  it('shows the deferred attempt as queued for its rate limit, until when', async () => {
    const page = await open('#/runs/second');
    await page.getByTestId('run-status').filter({ hasText: 'waiting' }).waitFor();
    await page.locator('.trow', { hasText: 'call' }).click();
    const until = page.getByTestId('activation-detail').getByTestId('sleeps-until');
    await until.waitFor();
    expect(await until.textContent()).toMatch(
      /^queued for rate limit "openai" until .+: a worker or waymark serve wakes the run then$/,
    );
    await screenshot(page, 'run-rate-limited');
    await page.close();
  });
});
