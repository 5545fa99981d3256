import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { z } from 'zod';
import triage from '../../examples/bug-triage/graph.js';
import changelogPost from '../../examples/changelog-post/graph.js';
import {
  all,
  append,
  graph,
  loadTrace,
  permanentError,
  person,
  run,
  sleep,
} from '../../src/index.js';
import { type Served, serve } from '../../src/server.js';
import { SqliteStore } from '../../src/sqlite.js';
import slow from '../cli/fixtures/slow.js';
import { bin, fixture } from '../cli/support.js';
import { describeBrowser, launchBrowser, openPage, screenshot } from './fixtures/browser.js';
import { pageDir } from './fixtures/page-build.js';

// `waymark ui`'s page in a real (headless) Chromium, over the real server on 127.0.0.1: the
// runs list, a finished bug-triage run's path, a changelog-post run answered through its form,
// a rewind, and a bad answer refused with nothing recorded. Screenshots go to test-results/.

/**
 * The page's globals, for functions run in the page: this file has Node's types, not the DOM's
 * (and the page's policy refuses code passed as strings).
 */
type Dom = {
  location: { hash: string };
  performance: { getEntriesByType(type: string): unknown[] };
};

/** A wait whose form has a number, an enum, a list of strings and a nested object. */
const survey = graph('survey', {
  state: z.object({ topic: z.string(), score: z.number().default(0) }),
})
  .node(
    'rate',
    person({
      prompt: (s) => `How good is "${s.topic}"?`,
      answer: z.object({
        score: z.number().int().min(1).max(5),
        mood: z.enum(['glad', 'meh']),
        tags: z.array(z.string()),
        by: z.object({ team: z.string() }),
      }),
      update: (a) => ({ score: a.score }),
    }),
    { terminal: true },
  )
  .entry('rate')
  .compile();

// A browser test waits for the page to move: a slow machine gets more time, never a flaky fail.
vi.setConfig({ testTimeout: 30_000 });
const poll = <T>(read: () => T | Promise<T>) => expect.poll(read, { timeout: 10_000 });

/** A call that fails twice before it gets through, then a step that fails for good. */
let calls = 0;
const brittle = graph('brittle', { state: z.object({ got: z.string().default('') }) })
  .node(
    'call',
    (_s, ctx) => {
      calls += 1;
      ctx.heartbeat({ call: calls });
      if (calls < 3) throw new Error(`connection reset (call ${calls})`);
      return { got: 'data' };
    },
    { retry: { attempts: 3, backoffMs: 20 } },
  )
  .node('check', () => {
    throw permanentError('the data is not what was promised');
  })
  .edge('call', 'check')
  .node('done', () => ({}), { terminal: true })
  .edge('check', 'done')
  .entry('call')
  .compile();

/** A run asleep for two days before its last node: the page says until when. */
const napping = graph('napping', { state: z.object({ n: z.number().default(0) }) })
  .node('first', () => ({ n: 1 }))
  .node('nap', sleep({ for: '2d' }))
  .node('last', () => ({}), { terminal: true })
  .edge('first', 'nap')
  .edge('nap', 'last')
  .entry('first')
  .compile();

/** Nodes named by path, as a subgraph's are: drawn inside a group per prefix. */
const nested = graph('nested', { state: z.object({ log: z.array(z.string()).default([]) }) })
  .node('plan', () => ({ log: ['plan'] }))
  .node('review/draft', () => ({ log: ['draft'] }))
  .node('review/check/lint', () => ({ log: ['lint'] }))
  .node('ship', () => ({ log: ['ship'] }), { terminal: true })
  .edge('plan', 'review/draft')
  .edge('review/draft', 'review/check/lint')
  .edge('review/check/lint', 'ship')
  .entry('plan')
  .compile();

/** A map fan-out: one `lint` branch per file, joined by `collect`. */
const mapped = graph('mapped', {
  state: z.object({ files: z.array(z.string()), verdicts: z.array(z.string()).default([]) }),
  reducers: { verdicts: append },
})
  .node('list', () => ({}))
  .node('lint', (_s, ctx) => ({ verdicts: [`${String(ctx.item)}: ok`] }), {
    reads: ['files'],
    writes: ['verdicts'],
  })
  .node('collect', () => ({}), { join: all(), terminal: true })
  .map('list', { over: 'files', branch: 'lint', join: 'collect' })
  .edge('lint', 'collect')
  .entry('list')
  .compile();

/**
 * A run left `running` by a process killed mid-step (`waymark run`, then SIGKILL): its lease is
 * held by an owner on this host that is gone.
 */
async function interrupted(db: string, runId: string): Promise<void> {
  const child = spawn(
    process.execPath,
    [bin, '--db', db, 'run', fixture('slow.ts'), '--run-id', runId],
    {
      env: { ...process.env, NO_COLOR: '1', FIXTURE_STEP_MS: '1000' },
    },
  );
  await new Promise<void>((resolve) => {
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes('▶ two:1')) resolve();
    });
  });
  child.kill('SIGKILL');
  await new Promise((resolve) => child.on('exit', resolve));
}

let dir: string;
let store: SqliteStore;
let served: Served;
let browser: Browser;
const saved = process.env.WAYMARK_CMS_FILE;

describeBrowser('the web page of waymark ui', () => {
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'waymark-ui-'));
    process.env.WAYMARK_CMS_FILE = join(dir, 'cms.json');
    store = new SqliteStore({ path: join(dir, 'runs.db') });
    const [ui] = await Promise.all([
      pageDir(),
      run(triage, { bug: 'search-pagination' }, { store, runId: 'triage-done' }),
      run(triage, { bug: 'webhook-flaky' }, { store, runId: 'triage-flaky' }),
      run(changelogPost, { version: '2.4.0' }, { store, runId: 'post-waiting' }),
      run(survey, { topic: 'the release notes' }, { store, runId: 'survey-waiting' }),
      run(survey, { topic: 'the roadmap' }, { store, runId: 'survey-cancel' }),
      run(brittle, {}, { store, runId: 'brittle-failed' }),
      run(nested, {}, { store, runId: 'nested-done' }),
      run(mapped, { files: ['a.ts', 'b.ts', 'c.ts'] }, { store, runId: 'mapped-done' }),
      run(napping, {}, { store, runId: 'nap-sleeping' }),
      interrupted(join(dir, 'runs.db'), 'slow-killed'),
    ]);
    served = await serve({
      store,
      graphs: [triage, changelogPost, survey, brittle, nested, mapped, slow, napping],
      token: 'page-token',
      ui,
    });
    browser = await launchBrowser();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await served?.close();
    await store?.close();
    if (saved === undefined) delete process.env.WAYMARK_CMS_FILE;
    else process.env.WAYMARK_CMS_FILE = saved;
    rmSync(dir, { recursive: true, force: true });
  });

  /** A fresh tab on a page of the UI, opened with the token in the fragment as `waymark ui` prints it. */
  const open = (route = ''): Promise<Page> => openPage(browser, served, route);

  it('lists the runs, newest first, with their status, and keeps the token out of the address bar', async () => {
    const page = await open();
    await page.locator('tr[data-run]').nth(8).waitFor();

    const rows = await page
      .locator('tr[data-run]')
      .evaluateAll((trs) =>
        trs.map((tr) => [tr.getAttribute('data-run'), tr.querySelector('.status')?.textContent]),
      );
    expect(new Map(rows as [string, string][])).toEqual(
      new Map([
        ['triage-done', 'succeeded'],
        ['triage-flaky', 'succeeded'],
        ['post-waiting', 'waiting'],
        ['survey-waiting', 'waiting'],
        ['survey-cancel', 'waiting'],
        ['brittle-failed', 'failed'],
        ['nested-done', 'succeeded'],
        ['mapped-done', 'succeeded'],
        ['slow-killed', 'interrupted'],
        ['nap-sleeping', 'waiting'],
      ]),
    );
    expect(page.url()).not.toContain('page-token');
    await screenshot(page, 'runs');
    await page.selectOption('select[aria-label=status]', 'waiting');
    await poll(() => page.locator('tr[data-run]').count()).toBe(4);
    await screenshot(page, 'runs-waiting');
    await page.close();
  });

  it('asks for the token when the URL lost its fragment, and takes it', async () => {
    const page = await browser.newPage();
    page.setDefaultTimeout(10_000);
    await page.goto(`${served.url}/ui/`);
    await page.getByLabel('token').fill(served.token);
    await page.getByRole('button', { name: 'Use token' }).click();
    await page.locator('tr[data-run="triage-done"]').waitFor();
    await page.close();
  });

  it('asks again when the server refuses the token the URL carried', async () => {
    const page = await browser.newPage();
    page.setDefaultTimeout(10_000);
    await page.goto(`${served.url}/ui/#token=not-this-one`);
    await page.getByRole('alert').filter({ hasText: 'did not take the token' }).waitFor();
    await page.getByLabel('token').fill(served.token);
    await page.getByRole('button', { name: 'Use token' }).click();
    await page.locator('tr[data-run="triage-done"]').waitFor();
    await page.close();
  });

  it("draws a finished bug-triage run's path on its declared graph: the nodes and edges of its trace", async () => {
    const trace = await loadTrace(store, 'triage-done');
    const nodeOf = new Map(trace.entries.map((e) => [e.activation, e.node]));
    const visitedNodes = new Set(trace.path);
    // Each activation came along the edge from the one that scheduled it; every branch of a
    // fan-out came back to its join (scheduled by whichever branch finished last).
    const joins = new Set(triage.def.nodes.filter((n) => n.join !== undefined).map((n) => n.name));
    const takenEdges = new Set(
      trace.entries
        .filter((e) => e.parent !== null && !joins.has(e.node))
        .map((e) => `${nodeOf.get(e.parent!)}->${e.node}`),
    );
    for (const e of triage.def.edges)
      if (joins.has(e.to) && visitedNodes.has(e.to) && visitedNodes.has(e.from))
        takenEdges.add(`${e.from}->${e.to}`);
    expect(joins.size).toBeGreaterThan(0);

    const page = await open('#/runs/triage-done');
    await page.getByTestId('run-status').filter({ hasText: 'succeeded' }).waitFor();
    await poll(() => page.locator('.step.visited').count()).toBe(visitedNodes.size);
    await poll(() => page.locator('.react-flow__edge.visited').count()).toBe(takenEdges.size);

    const drawn = await page
      .locator('.step.visited')
      .evaluateAll((els) => els.map((el) => el.getAttribute('data-node')));
    expect(new Set(drawn)).toEqual(visitedNodes);
    const edges = await page
      .locator('.react-flow__edge.visited')
      .evaluateAll((els) => els.map((el) => el.getAttribute('data-id')));
    expect(new Set(edges)).toEqual(takenEdges);
    expect(await page.locator('.step.unvisited').count()).toBe(
      triage.def.nodes.length - visitedNodes.size,
    );
    // The fan-out's two copies are labelled by branch, and the timeline has one row per activation.
    expect(await page.locator('[data-node="fix-code"] .copies').textContent()).toBe('[0]');
    await poll(() => page.locator('.trow').count()).toBe(trace.path.length);

    await page.locator('.trow', { hasText: 'verify' }).click();
    const detail = page.getByTestId('activation-detail');
    await detail.getByText('State after it, against the step before').waitFor();
    await detail.locator('table.diff td.path', { hasText: 'verification' }).first().waitFor();
    await screenshot(page, 'run-bug-triage');
    await page.close();
  });

  it("shows each node's worst case and what runs spent there, and the worst path, when asked", async () => {
    const page = await open('#/runs/post-waiting');
    await page.locator('[data-node="draft"]').waitFor();
    expect(await page.locator('.step-cost').count()).toBe(0);

    await page.getByRole('button', { name: 'show cost' }).click();

    const draft = page.locator('[data-node="draft"] .step-cost');
    await poll(() => draft.textContent()).toMatch(/^≤ 4× · 36 calls · 120k tok · \$0\.072 · ~ /);
    // publish has not run anywhere: its worst case only.
    expect(await page.locator('[data-node="publish"] .step-cost').textContent()).toBe('≤ 1×');
    // The worst case loops draft, fact-check and approve at their caps: the edges between its
    // nodes that this run (waiting at approve, after one loop) has not taken are drawn as it.
    await poll(() => page.locator('.react-flow__edge.worst').count()).toBeGreaterThan(0);
    const worst = await page
      .locator('.react-flow__edge.worst')
      .evaluateAll((els) => els.map((el) => el.getAttribute('data-id')));
    expect(worst).toContain('approve->publish');
    expect(worst.sort()).toEqual(['approve->draft', 'approve->publish']);
    await screenshot(page, 'run-changelog-cost');
    await page.getByRole('button', { name: 'hide cost' }).click();
    await poll(() => page.locator('.step-cost').count()).toBe(0);
    await page.close();
  });

  it('shows the retries and the loop of a flaky run: counts per node', async () => {
    const trace = await loadTrace(store, 'triage-flaky');
    const reproduced = trace.path.filter((n) => n === 'reproduce').length;
    expect(reproduced).toBeGreaterThan(1);

    const page = await open('#/runs/triage-flaky');
    await page.getByTestId('run-status').filter({ hasText: 'succeeded' }).waitFor();
    await poll(() => page.locator('[data-node="reproduce"]').getAttribute('data-count')).toBe(
      String(reproduced),
    );
    await screenshot(page, 'run-bug-triage-flaky');
    await page.close();
  });

  it('marks the retried and the failed activations, and shows the error with its stack', async () => {
    const page = await open('#/runs/brittle-failed');
    await page.getByTestId('run-status').filter({ hasText: 'failed' }).waitFor();
    await page.locator('[data-node="call"] .retried', { hasText: '2 retried' }).waitFor();
    await page.locator('.step.has-failed.stopped[data-node="check"]').waitFor();
    expect(await page.locator('[data-node="done"]').getAttribute('class')).toContain('unvisited');
    await page.locator('.trow', { hasText: 'call' }).click();
    const detail = page.getByTestId('activation-detail');
    await detail.getByText('attempt 3: succeeded').waitFor();
    expect(await detail.locator('.attempts li.failed').count()).toBe(2);
    // Each attempt's last heartbeat, from its trace entry.
    await poll(() => detail.getByTestId('heartbeat').allTextContents()).toEqual([
      expect.stringMatching(/last heartbeat .*: \{"call":1\}$/),
      expect.stringMatching(/last heartbeat .*: \{"call":2\}$/),
      expect.stringMatching(/last heartbeat .*: \{"call":3\}$/),
    ]);
    await screenshot(page, 'run-heartbeats');
    await page.locator('.trow', { hasText: 'check' }).click();
    await detail.getByText('the data is not what was promised').first().waitFor();
    // Before Resume is pressed, the page says what it would run again and re-pay.
    await page
      .getByTestId('resume-plan')
      .filter({ hasText: 'resuming runs again check:1 and re-pays 0 in / 0 out tokens' })
      .waitFor();
    expect(await detail.locator('.attempts pre').first().textContent()).toContain('page.test.ts');
    await screenshot(page, 'run-failed');
    await page.close();
  });

  it('shows a sleeping activation as waiting, and until when it sleeps', async () => {
    const page = await open('#/runs/nap-sleeping');
    await page.getByTestId('run-status').filter({ hasText: 'waiting' }).waitFor();
    await page.locator('.trow', { hasText: 'nap' }).click();
    const until = page.getByTestId('activation-detail').getByTestId('sleeps-until');
    await poll(() => until.textContent()).toMatch(
      /^sleeping until .+: a worker or waymark serve wakes the run then$/,
    );
    await screenshot(page, 'run-sleeping');
  });

  it('draws nodes named by path inside nested groups, one per prefix: ready for subgraphs', async () => {
    const page = await open('#/runs/nested-done');
    await page.getByTestId('run-status').filter({ hasText: 'succeeded' }).waitFor();
    await poll(() => page.locator('.step.visited').count()).toBe(4);
    const groups = page.locator('.react-flow__node-prefix');
    expect(await groups.evaluateAll((els) => els.map((el) => el.getAttribute('data-id')))).toEqual([
      'review',
      'review/check',
    ]);
    expect(await groups.first().textContent()).toBe('review/');
    // A node sits inside its group's box, drawn there by the layout.
    const outer = await page.locator('.react-flow__node[data-id="review"]').boundingBox();
    const inner = await page
      .locator('.react-flow__node[data-id="review/check/lint"]')
      .boundingBox();
    expect(inner!.x).toBeGreaterThanOrEqual(outer!.x);
    expect(inner!.y + inner!.height).toBeLessThanOrEqual(outer!.y + outer!.height);
    await poll(() => page.locator('.react-flow__edge.visited').count()).toBe(3);
    await screenshot(page, 'run-nested');
    await page.close();
  });

  it("labels a map's copies by item, and shows each copy's item in its input view", async () => {
    const page = await open('#/runs/mapped-done');
    await page.getByTestId('run-status').filter({ hasText: 'succeeded' }).waitFor();
    await page.locator('[data-node="lint"][data-count="3"]').waitFor();
    expect(await page.locator('[data-node="lint"] .copies').textContent()).toBe('[0] [1] [2]');
    await page.locator('.trow', { hasText: 'lint [1]' }).click();
    const detail = page.getByTestId('activation-detail');
    await detail.getByText('"ctx.item": "b.ts"').waitFor();
    await page.close();
  });

  it('shows a run whose process died as interrupted, not running', async () => {
    const page = await open('#/runs/slow-killed');
    await page.getByTestId('run-status').filter({ hasText: 'interrupted' }).waitFor();
    expect(await page.locator('.live-dot').count()).toBe(0);
    await page.close();
  });

  it('cancels a waiting run from its page, and the page shows it cancelled', async () => {
    const page = await open('#/runs/survey-cancel');
    await page.getByTestId('run-status').filter({ hasText: 'waiting' }).waitFor();
    await page.getByRole('button', { name: 'Cancel' }).click();
    await page.getByTestId('run-status').filter({ hasText: 'cancelled' }).waitFor();
    expect((await store.getRun('survey-cancel'))?.status).toBe('cancelled');
    await page.close();
  });

  it('answers a waiting changelog-post run through its form and follows it to succeeded, without a reload', async () => {
    const page = await open('#/runs/post-waiting');
    await page.getByTestId('run-status').filter({ hasText: 'waiting' }).waitFor();
    const form = page.locator('form.wait');
    await form.getByText('Publish').first().waitFor();
    await screenshot(page, 'run-changelog-waiting');
    await form
      .getByRole('radiogroup', { name: 'approved' })
      .getByRole('radio', { name: 'yes' })
      .check();
    await form.getByLabel('note').fill('ship it');
    const before = await page.evaluate(
      () => (globalThis as unknown as Dom).performance.getEntriesByType('navigation').length,
    );

    await form.getByRole('button', { name: 'Answer' }).click();

    await page
      .getByTestId('run-status')
      .filter({ hasText: 'succeeded' })
      .waitFor({ timeout: 20_000 });
    expect(
      await page.evaluate(
        () => (globalThis as unknown as Dom).performance.getEntriesByType('navigation').length,
      ),
    ).toBe(before);
    const [wait] = await store.listWaits('post-waiting');
    expect(JSON.parse(wait!.answer!)).toEqual({ approved: true, note: 'ship it' });
    expect(wait!.answeredBy).toBe('ui');
    expect((await store.getRun('post-waiting'))?.status).toBe('succeeded');
    await page.locator('[data-node="publish"].visited').waitFor();
    // The publish step's effect, from the ledger: its name, under the activation that made it.
    await page.locator('.trow', { hasText: 'publish' }).click();
    const effects = page.getByTestId('activation-detail').getByTestId('effects');
    await effects.waitFor();
    const [effect] = await store.listEffects('post-waiting');
    expect(await effects.locator('td.path').allTextContents()).toEqual(['publish']);
    expect(effect!.key).toBe(`post-waiting/${effect!.key.split('/')[1]}/publish`);
    await screenshot(page, 'run-changelog-succeeded');
    await page.close();
  });

  it('rewinds a run from a node, with a note, as a new run the page then shows', async () => {
    await poll(async () => (await store.getRun('post-waiting'))?.status).toBe('succeeded');
    const page = await open('#/runs/post-waiting');
    await page.getByTestId('run-status').filter({ hasText: 'succeeded' }).waitFor();
    await page.getByRole('button', { name: 'Rewind…' }).click();
    await page.selectOption('select[aria-label="rewind to"]', 'draft');
    await page.getByLabel('rewind note').fill('say more about scheduled exports');
    // The price of the rewind, before it is made: draft runs again on the changed notes.
    await page
      .getByTestId('rewind-plan')
      .filter({ hasText: /runs again draft:2, fact-check:2, approve:1 and re-pays \d+ in/ })
      .waitFor();
    await screenshot(page, 'run-rewind-plan');
    await page.getByRole('button', { name: 'Rewind as a new run' }).click();

    await page.waitForFunction(
      () => !(globalThis as unknown as Dom).location.hash.includes('post-waiting'),
    );
    const newRunId = decodeURIComponent(
      (await page.evaluate(() => (globalThis as unknown as Dom).location.hash)).slice(
        '#/runs/'.length,
      ),
    );
    await page
      .getByTestId('run-status')
      .filter({ hasText: 'waiting' })
      .waitFor({ timeout: 20_000 });
    expect((await store.getRun(newRunId))?.status).toBe('waiting');
    const { snapshot } = await import('../../src/index.js').then(({ inspect }) =>
      inspect(store, changelogPost, newRunId),
    );
    expect(snapshot.state.notes).toContain('say more about scheduled exports');
    expect((await store.getRun('post-waiting'))?.status).toBe('succeeded');
    await screenshot(page, 'run-rewound');
    await page.close();
  });

  it('shows the schema error of a bad answer and records nothing; a good one is taken', async () => {
    const page = await open('#/waits');
    const form = page.locator('form.wait[data-request="survey-waiting/rate:1"]');
    await form.waitFor();
    await form.getByLabel('score').fill('9');
    await form.getByLabel('mood').selectOption('meh');
    await form.getByRole('button', { name: 'add item' }).click();
    await form.getByLabel('tags 1').fill('docs');
    await form.getByLabel('team').fill('platform');
    await form.getByRole('button', { name: 'Answer' }).click();

    await form.getByRole('alert').filter({ hasText: 'ANSWER_INVALID' }).waitFor();
    await screenshot(page, 'waits-bad-answer');
    const [open1] = await store.listWaits('survey-waiting');
    expect(open1!.answer).toBeNull();
    expect(open1!.closedAt).toBeNull();
    expect((await store.getRun('survey-waiting'))?.status).toBe('waiting');

    await form.getByLabel('score').fill('4');
    await form.getByLabel('mood').selectOption('glad');
    await form.getByRole('button', { name: 'Answer' }).click();
    await poll(async () => (await store.getRun('survey-waiting'))?.status).toBe('succeeded');
    const [answered] = await store.listWaits('survey-waiting');
    expect(JSON.parse(answered!.answer!)).toEqual({
      score: 4,
      mood: 'glad',
      tags: ['docs'],
      by: { team: 'platform' },
    });
    await poll(() => form.count()).toBe(0);
    await page.close();
  });
});
