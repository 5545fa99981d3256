import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { z } from 'zod';
import {
  answer,
  type Clock,
  type GraphBuilder,
  graph,
  person,
  resume,
  run,
} from '../../src/index.js';
import { type Served, serve } from '../../src/server.js';
import { SqliteStore } from '../../src/sqlite.js';
import { describeBrowser, launchBrowser, screenshot } from './fixtures/browser.js';
import { pageDir } from './fixtures/page-build.js';

// What a new user met on the page (issue 30): a yes-no form that answered "no" untouched, a
// token URL that did nothing in a tab already open, a waterfall of 1-px bars after a wait of
// minutes, and node names too small to read. In a real Chromium, screenshots in test-results/.

type Dom = {
  location: { hash: string };
  performance: { getEntriesByType(type: string): unknown[] };
};

vi.setConfig({ testTimeout: 30_000 });
const poll = <T>(read: () => T | Promise<T>) => expect.poll(read, { timeout: 10_000 });
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A yes-no gate with a note and a level to choose, as a ticket's approval is. */
const gate = graph('gate', {
  state: z.object({
    ticket: z.string(),
    approved: z.boolean().default(false),
    level: z.enum(['low', 'high']).default('low'),
    note: z.string().default(''),
  }),
})
  .node(
    'approve',
    person({
      prompt: (s) => `Send the reply to ${s.ticket}?`,
      answer: z.object({
        approved: z.boolean(),
        level: z.enum(['low', 'high']),
        note: z.string().default(''),
      }),
    }),
    { terminal: true },
  )
  .entry('approve')
  .compile();

/** Thirteen steps, a wait for a person in the middle: tall to draw, long to wait for. */
const TallState = z.object({ approved: z.boolean().default(false) });
let tall: GraphBuilder<z.output<typeof TallState>, string, z.input<typeof TallState>> = graph(
  'tall',
  { state: TallState },
).node('prepare', async () => {
  await pause(150);
  return {};
});
let previous = 'prepare';
for (let i = 1; i <= 10; i++) {
  tall = tall
    .node(`check-${i}`, async () => {
      await pause(20);
      return {};
    })
    .edge(previous, `check-${i}`);
  previous = `check-${i}`;
}
const tallGraph = tall
  .node('approve', person({ prompt: 'Send it?', answer: z.object({ approved: z.boolean() }) }))
  .node(
    'send',
    async () => {
      await pause(120);
      return {};
    },
    { terminal: true },
  )
  .edge(previous, 'approve')
  .edge('approve', 'send')
  .entry('prepare')
  .compile();

/** The real clock, moved on by `shift` ms: the answer comes ten minutes after the wait. */
const shifted = (shift: number): Clock => ({
  now: () => Date.now() + shift,
  sleep: (ms) => pause(ms).then(() => undefined),
});

let dir: string;
let store: SqliteStore;
let served: Served;
let browser: Browser;

describeBrowser('what a new user met on the web page', () => {
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'waymark-ui-trial-'));
    store = new SqliteStore({ path: join(dir, 'runs.db') });
    const [ui] = await Promise.all([
      pageDir(),
      run(gate, { ticket: 'T-1' }, { store, runId: 'gate-1' }),
      (async () => {
        await run(tallGraph, {}, { store, runId: 'waited' });
        const later = shifted(10 * 60_000);
        await answer(store, 'waited', 'waited/approve:1', { approved: true }, { by: 'ana' });
        await resume(store, tallGraph, 'waited', { clock: later });
      })(),
    ]);
    served = await serve({ store, graphs: [gate, tallGraph], token: 'trial-token', ui });
    browser = await launchBrowser();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await served?.close();
    await store?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function open(hash: string): Promise<Page> {
    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    page.setDefaultTimeout(10_000);
    page.on('pageerror', (e) => {
      throw e;
    });
    await page.goto(`${served.url}/ui/${hash}`);
    return page;
  }

  it('an untouched yes-no form sends nothing: the choices must be made, and a "no" confirmed', async () => {
    const page = await open(`#token=${served.token}`);
    await page.evaluate(() => {
      (globalThis as unknown as Dom).location.hash = '#/runs/gate-1';
    });
    const form = page.locator('form.wait');
    await form.getByText('Send the reply to T-1?').waitFor();
    const approved = form.getByRole('radiogroup', { name: 'approved' });
    // Neither yes nor no is chosen, nor a level.
    expect(await approved.getByRole('radio', { name: 'yes' }).isChecked()).toBe(false);
    expect(await approved.getByRole('radio', { name: 'no' }).isChecked()).toBe(false);
    expect(await form.getByLabel('level').inputValue()).toBe('');
    await screenshot(page, 'trial-gate-untouched');

    await form.getByRole('button', { name: 'Answer' }).click();
    await form
      .getByRole('alert')
      .filter({ hasText: 'Choose an answer for approved, level' })
      .waitFor();
    await screenshot(page, 'trial-gate-choose-first');
    const [open1] = await store.listWaits('gate-1');
    expect(open1!.answer).toBeNull();

    await approved.getByRole('radio', { name: 'no' }).check();
    await form.getByLabel('level').selectOption('high');
    await form.getByRole('button', { name: 'Answer' }).click();
    // A rejection is asked again; nothing is sent yet.
    const confirm = form.locator('.confirm');
    await confirm.getByText('This answer rejects').waitFor();
    await screenshot(page, 'trial-gate-confirm-reject');
    expect((await store.listWaits('gate-1'))[0]!.answer).toBeNull();
    await confirm.getByRole('button', { name: 'Back' }).click();
    await poll(() => confirm.count()).toBe(0);
    expect((await store.listWaits('gate-1'))[0]!.answer).toBeNull();

    await form.getByRole('button', { name: 'Answer' }).click();
    await confirm.getByRole('button', { name: 'Reject' }).click();
    await poll(async () => (await store.getRun('gate-1'))?.status).toBe('succeeded');
    const [answered] = await store.listWaits('gate-1');
    expect(JSON.parse(answered!.answer!)).toEqual({ approved: false, level: 'high', note: '' });
    expect(answered!.answeredBy).toBe('ui');
    await page.close();
  });

  it('takes the token of the printed URL opened in a tab already on the page, without a reload', async () => {
    const page = await open('');
    await page.getByText('This page needs the token').waitFor();
    const loads = () =>
      page.evaluate(
        () => (globalThis as unknown as Dom).performance.getEntriesByType('navigation').length,
      );
    const before = await loads();
    // The printed URL, opened in the same tab: only the fragment changes.
    await page.goto(`${served.url}/ui/#token=${served.token}`);
    await page.locator('tr[data-run="gate-1"]').waitFor();
    expect(await loads()).toBe(before);
    expect(page.url()).not.toContain('trial-token');
    await screenshot(page, 'trial-token-in-open-tab');

    // A link to a run with the token in it opens that run.
    const other = await open(`#/runs/waited?token=${served.token}`);
    await other.getByTestId('run-status').filter({ hasText: 'succeeded' }).waitFor();
    expect(other.url()).toMatch(/#\/runs\/waited$/);
    await other.close();
    await page.close();
  });

  it('draws a run that waited ten minutes with the wait drawn short and its steps to scale, and a tall graph legible from its top', async () => {
    const page = await open(`#token=${served.token}`);
    await page.evaluate(() => {
      (globalThis as unknown as Dom).location.hash = '#/runs/waited?graph=tall';
    });
    await page.getByTestId('run-status').filter({ hasText: 'succeeded' }).waitFor();
    await poll(() => page.locator('.trow').count()).toBe(13);
    const axis = page.getByTestId('time-axis');
    await axis.getByText('a wait drawn short').waitFor();
    expect(await axis.locator('.tbreak-label').textContent()).toMatch(/^10 min 0 s$/);
    // The 150 ms step is a bar of a good part of the track, not a 1-px sliver of ten minutes.
    const track = await page
      .locator('.trow', { hasText: 'prepare' })
      .locator('.tbar')
      .boundingBox();
    const bar = await page.locator('.trow', { hasText: 'prepare' }).locator('.bar').boundingBox();
    expect(bar!.width).toBeGreaterThan(track!.width * 0.15);
    const sent = await page.locator('.trow', { hasText: 'send' }).locator('.bar').boundingBox();
    expect(sent!.width).toBeGreaterThan(track!.width * 0.1);

    // The names of the nodes are drawn at 11 px or more, and the graph starts at its entry.
    await page.locator('.step[data-node="prepare"]').waitFor();
    const drawn = await page
      .locator('.step[data-node="prepare"] .step-name')
      .evaluate((el) => el.getBoundingClientRect().height);
    const css = await page
      .locator('.step[data-node="prepare"] .step-name')
      .evaluate((el) => (el as unknown as { offsetHeight: number }).offsetHeight);
    expect(drawn / css).toBeGreaterThanOrEqual(0.84);
    const panel = await page.getByTestId('graph').boundingBox();
    const entry = await page.locator('.step[data-node="prepare"]').boundingBox();
    expect(entry!.y).toBeGreaterThanOrEqual(panel!.y);
    expect(entry!.y + entry!.height).toBeLessThan(panel!.y + panel!.height);
    await screenshot(page, 'trial-waited-run');
    await page.close();
  });
});
