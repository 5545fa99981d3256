import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { END, enqueue, graph } from '../../src/index.js';
import { type Served, serve } from '../../src/server.js';
import { SqliteStore } from '../../src/sqlite.js';
import { describeBrowser, launchBrowser, openPage, screenshot } from './fixtures/browser.js';
import { pageDir } from './fixtures/page-build.js';

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

let dir: string;
let store: SqliteStore;
let served: Served;
let browser: Browser;

describeBrowser('the web page of a queued run', () => {
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'waymark-ui-limits-'));
    store = new SqliteStore({ path: join(dir, 'runs.db') });
    // No worker runs here: the first holds the slot, the second waits queued behind it.
    await enqueue(store, limited, { customer: 'acme' }, { runId: 'first' });
    await enqueue(store, limited, { customer: 'acme' }, { runId: 'second' });
    const ui = await pageDir();
    served = await serve({ store, graphs: [limited], token: 'page-token', ui });
    browser = await launchBrowser();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await served?.close();
    await store?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const open = (route: string): Promise<Page> => openPage(browser, served, route);

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
