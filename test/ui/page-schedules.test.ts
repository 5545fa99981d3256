import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { END, graph, pauseSchedule, schedule } from '../../src/index.js';
import { type Served, serve } from '../../src/server.js';
import { SqliteStore } from '../../src/sqlite.js';
import { describeBrowser, launchBrowser, screenshot } from './fixtures/browser.js';
import { pageDir } from './fixtures/page-build.js';

// The page's schedules view in a real (headless) Chromium, over the real server: each schedule
// with its cron expression, its next run and its last run (linked, with the run's status), a
// paused one said so. The server itself ticked the schedule whose tick was due.

vi.setConfig({ testTimeout: 30_000 });
const poll = <T>(read: () => T | Promise<T>) => expect.poll(read, { timeout: 10_000 });

const hour = 3_600_000;

const report = graph('report', { state: z.object({ team: z.string() }) })
  .node('write', () => ({}))
  .edge('write', END)
  .entry('write')
  .compile();

let dir: string;
let store: SqliteStore;
let served: Served;
let browser: Browser;

describeBrowser('the schedules of the web page', () => {
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'waymark-ui-schedules-'));
    store = new SqliteStore({ path: join(dir, 'runs.db') });
    const top = Math.floor(Date.now() / hour) * hour;
    // Declared before the last hour struck: that tick is due, and the server starts it.
    await schedule(store, report, {
      id: 'hourly-sales',
      cron: '0 * * * *',
      input: { team: 'sales' },
      clock: { now: () => top - 1, sleep: async () => {} },
    });
    await schedule(store, report, {
      id: 'weekday-mornings',
      cron: '0 9 * * 1-5',
      timezone: 'Europe/Berlin',
      input: { team: 'ops' },
    });
    await schedule(store, report, { id: 'nightly', cron: '0 2 * * *', input: { team: 'qa' } });
    await pauseSchedule(store, 'nightly');
    const ui = await pageDir();
    served = await serve({ store, graphs: [report], token: 'page-token', ui, schedulePollMs: 50 });
    // The server's tick of hourly-sales, and its run, done before the page is opened.
    const deadline = Date.now() + 10_000;
    while ((await store.listRuns())[0]?.status !== 'succeeded') {
      if (Date.now() > deadline) throw new Error('the server did not start the due tick');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    browser = await launchBrowser();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await served?.close();
    await store?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function open(): Promise<Page> {
    const page = await browser.newPage({ viewport: { width: 1440, height: 700 } });
    page.setDefaultTimeout(10_000);
    page.on('pageerror', (e) => {
      throw e;
    });
    await page.goto(`${served.url}/ui/#token=${served.token}`);
    await page.getByRole('link', { name: 'Schedules' }).click();
    return page;
  }

  it('lists the schedules with their next and last runs, the last one linked with its status', async () => {
    const page = await open();
    await page.locator('tr[data-schedule]').nth(2).waitFor();
    const rows = await page
      .locator('tr[data-schedule]')
      .evaluateAll((trs) =>
        trs.map((tr) => [
          tr.getAttribute('data-schedule'),
          tr.querySelector('[data-next]')?.textContent,
          tr.querySelector('[data-last]')?.textContent,
        ]),
      );
    expect(rows.map((r) => r[0])).toEqual(['hourly-sales', 'nightly', 'weekday-mornings']);
    const [hourly, nightly, weekday] = rows as [
      [string, string, string],
      [string, string, string],
      [string, string, string],
    ];
    expect(hourly[1]).toMatch(/\(in \d+m\)|\(in \d+s\)|\(in 1h\)/);
    await poll(() => page.locator('tr[data-schedule=hourly-sales] .status').textContent()).toBe(
      'succeeded',
    );
    expect(nightly[1]).toBe('paused');
    expect(nightly[2]).toBe('none yet');
    expect(weekday[1]).toMatch(/\(in \d+[smhd]\)/);
    await screenshot(page, 'schedules');
    await page.locator('tr[data-schedule=hourly-sales] [data-last] a').click();
    await poll(() => page.url()).toContain('/runs/sched%3Ahourly-sales');
    await page.close();
  });
});
