import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { END, event, graph, run } from '../../src/index.js';
import { type Served, serve } from '../../src/server.js';
import { SqliteStore } from '../../src/sqlite.js';
import { describeBrowser, launchBrowser, openPage, screenshot } from './fixtures/browser.js';
import { pageDir } from './fixtures/page-build.js';

// The page shows an event wait with the event's name and its key, as it shows a sleep with
// until when it sleeps: what a signal must name to reach the run.

const State = z.object({ orderId: z.string(), paidCents: z.number().default(0) });
const orders = graph('page-orders', { state: State })
  .node(
    'paid',
    event({
      name: 'payment',
      schema: z.object({ paidCents: z.number().int() }),
      key: (s: z.infer<typeof State>) => s.orderId,
    }),
  )
  .node('ship', () => ({}))
  .edge('paid', 'ship')
  .edge('ship', END)
  .entry('paid')
  .compile();

vi.setConfig({ testTimeout: 30_000 });

let dir: string;
let store: SqliteStore;
let served: Served;
let browser: Browser;

describeBrowser('the web page and event waits', () => {
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'waymark-ui-events-'));
    store = new SqliteStore({ path: join(dir, 'runs.db') });
    const [ui] = await Promise.all([
      pageDir(),
      run(orders, { orderId: 'o-7' }, { store, runId: 'order-waiting' }),
    ]);
    served = await serve({ store, graphs: [orders], token: 'page-token', ui });
    browser = await launchBrowser();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await served?.close();
    await store?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const open = (route: string): Promise<Page> => openPage(browser, served, route);

  it('shows an event wait with the name of its event and its key', async () => {
    const page = await open('#/runs/order-waiting');
    await page.getByTestId('run-status').filter({ hasText: 'waiting' }).waitFor();
    const waits = page.getByTestId('event-wait').first();
    await waits.waitFor();
    expect(await waits.textContent()).toContain('waits for event payment with key o-7');
    await screenshot(page, 'run-event-waiting');
    await page.close();
  });
});
