import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { END, graph, run } from '../../src/index.js';
import { type Served, serve } from '../../src/server.js';
import { SqliteStore } from '../../src/sqlite.js';
import { describeBrowser, launchBrowser, openPage, screenshot } from './fixtures/browser.js';
import { pageDir } from './fixtures/page-build.js';

// The page of a run whose attempt its rate limit deferred says so on the activation: queued for
// the resource until its window has room; nothing of it has run.

vi.setConfig({ testTimeout: 30_000 });

const metered = graph('metered-page', { state: z.object({ done: z.boolean().default(false) }) })
  .node('call', () => ({ done: true }), { rateLimit: { resource: 'openai', requestsPerMinute: 1 } })
  .edge('call', END)
  .entry('call')
  .compile();

let dir: string;
let store: SqliteStore;
let served: Served;
let browser: Browser;

describeBrowser('the web page of a rate-limited run', () => {
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'waymark-ui-rates-'));
    store = new SqliteStore({ path: join(dir, 'runs.db') });
    // The first takes the minute's one request; the second is deferred, left to a host.
    await run(metered, {}, { store, runId: 'first' });
    await run(metered, {}, { store, runId: 'second', holdSleepsMs: 0 });
    const ui = await pageDir();
    served = await serve({ store, graphs: [metered], token: 'page-token', ui });
    browser = await launchBrowser();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await served?.close();
    await store?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const open = (route: string): Promise<Page> => openPage(browser, served, route);

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
