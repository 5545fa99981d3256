// How fast the web page of `waymark ui` opens a long run: a finished 10,000-step run on a SQLite
// file, opened in headless Chromium (Debian's, never a download) from navigation until its graph
// shows all 10,000 activations of its node and the status; the timeline is windowed, so only
// the rows in view are drawn. Also how long the run's stream takes to read in Node alone.
//
//   npm run bench -- ui
//
// Printed, never asserted. Without Chromium (/usr/bin/chromium, or WAYMARK_CHROMIUM) the
// scenario reports that it could not measure.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';
import { build } from 'vite';
import { z } from 'zod';
import { check, progress, settingsFromEnv, stat } from './lib/measure.js';
import { emit, type Row } from './lib/report.js';
import { loadWaymarkSqlite, waymarkOrigin, wm } from './lib/waymark.js';

const settings = settingsFromEnv();
const steps = 10_000;
const targetMs = 1000;
const chromiumPath = process.env.WAYMARK_CHROMIUM ?? '/usr/bin/chromium';
const work = mkdtempSync(join(tmpdir(), 'waymark-ui-bench-'));
const server: typeof import('../src/server.js') = process.env.BENCH_WAYMARK_BUILD
  ? await import(new URL('server.js', pathToFileURL(process.env.BENCH_WAYMARK_BUILD)).href)
  : await import('../src/server.js');

if (!existsSync(chromiumPath)) {
  emit({
    scenario: 'ui',
    title: 'waymark ui: open a 10,000-step run',
    waymarkOrigin,
    rows: [
      {
        measure: `open a ${steps.toLocaleString('en-US')}-step run in the page`,
        unit: 'ms',
        text: `not measured: no Chromium at ${chromiumPath}`,
      },
    ],
    details: {},
  });
  process.exit(0);
}

const loop = wm
  .graph('ui-bench', { state: z.object({ n: z.number().default(0) }) })
  .node('tick', (s) => ({ n: s.n + 1 }), { visits: steps })
  .route('tick', (s) => (s.n < steps ? 'tick' : wm.END), ['tick', wm.END])
  .entry('tick')
  .compile();

progress(`ui: building the page and recording a ${steps}-step run`);
const ui = join(work, 'ui');
await build({
  configFile: new URL('../vite.ui.config.ts', import.meta.url).pathname,
  logLevel: 'error',
  build: { outDir: ui, emptyOutDir: true },
});
const { SqliteStore } = await loadWaymarkSqlite();
const store = new SqliteStore({ path: join(work, 'runs.db') });
const done = await wm.run(loop, {}, { store, runId: 'long', maxSteps: steps + 10 });
check(done.status === 'succeeded' && done.steps === steps, `the run ended ${done.status}`);
const served = await server.serve({ store, graphs: [loop], token: 'bench', ui });
const browser = await chromium.launch({
  executablePath: chromiumPath,
  headless: true,
  args: [
    '--no-sandbox',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-default-apps',
    '--disable-sync',
    '--no-first-run',
    '--disable-dev-shm-usage',
  ],
});

/**
 * The page's globals, for functions run in the page: this file has Node's types, not the DOM's
 * (and the page's policy refuses code passed as strings).
 */
type Dom = {
  location: { hash: string };
  document: {
    querySelector(
      selector: string,
    ): { getAttribute(name: string): string | null; textContent: string | null } | null;
  };
};

/**
 * Opening the run, in ms: from the runs page (as a click on its row does), or `cold`, from
 * navigation to the page (its bundle loaded and run first). The page reads the run's events so
 * far, its trace, status, waits and graph.
 */
async function openRep(cold: boolean): Promise<number> {
  const page = await browser.newPage({ viewport: { width: 1440, height: 1000 } });
  let t0 = performance.now();
  await page.goto(`${served.url}/ui/#token=bench`);
  if (!cold) {
    await page.locator('tr[data-run="long"]').waitFor();
    t0 = performance.now();
  }
  await page.evaluate(() => {
    (globalThis as unknown as Dom).location.hash = '#/runs/long?graph=ui-bench';
  });
  await page.waitForFunction(
    (n) => {
      const { document } = globalThis as unknown as Dom;
      return (
        document.querySelector('[data-node="tick"]')?.getAttribute('data-count') === String(n) &&
        document.querySelector('[data-testid="run-status"]')?.textContent === 'succeeded' &&
        document.querySelector('.trow') !== null
      );
    },
    steps,
    { polling: 'raf', timeout: 30_000 },
  );
  const ms = performance.now() - t0;
  const rows = await page.locator('.trow').count();
  check(rows < 100, `the timeline drew ${rows} rows: it should draw only those in view`);
  await page.close();
  return ms;
}

/** The run's whole stream read over HTTP in Node, in ms: the server's share of an open. */
async function streamRep(): Promise<number> {
  const t0 = performance.now();
  const res = await fetch(`${served.url}/runs/long/events`, {
    headers: { authorization: 'Bearer bench' },
  });
  const text = await res.text();
  const ms = performance.now() - t0;
  const completed = text.split('event: activation.completed').length - 1;
  check(completed === steps, `the stream told ${completed} completions`);
  return ms;
}

progress(`ui: warm-up ${settings.warmupMs} ms, then ${settings.reps} opens`);
const warmUntil = Date.now() + settings.warmupMs;
while (Date.now() < warmUntil) await openRep(false);
const open: number[] = [];
const cold: number[] = [];
const stream: number[] = [];
for (let i = 0; i < settings.reps; i++) {
  open.push(await openRep(false));
  cold.push(await openRep(true));
  stream.push(await streamRep());
}
await browser.close();
await served.close();
await store.close();
rmSync(work, { recursive: true, force: true });

const opened = stat(open);
const rows: Row[] = [
  {
    measure: `open a finished ${steps.toLocaleString('en-US')}-step run from the runs page, until drawn`,
    unit: 'ms',
    waymark: opened,
    target: `< ${targetMs} ms`,
    met: opened.median < targetMs,
  },
  {
    measure: '  the same from navigation (the bundle loaded first)',
    unit: 'ms',
    waymark: stat(cold),
  },
  {
    measure: '  its stream as Server-Sent Events, read in Node (what the page no longer waits for)',
    unit: 'ms',
    waymark: stat(stream),
  },
];
emit({
  scenario: 'ui',
  title: 'waymark ui: open a 10,000-step run',
  waymarkOrigin,
  rows,
  notes: [
    `ui: a ${steps}-step loop recorded on SQLite in a temp dir; the server and the page built by Vite into a temp dir; each repetition opens a fresh tab of headless Chromium at the runs page, then goes to the run (clock started there; from navigation for the second row), and stops the clock when the graph counts ${steps} activations of its node, the status reads succeeded and the timeline has rows (polled every animation frame); the stream row is GET /runs/:id/events read to its end by fetch in Node; ${settings.reps} repetitions.`,
  ],
  details: { steps, openMs: open, coldMs: cold, streamMs: stream },
});
process.exit(0);
