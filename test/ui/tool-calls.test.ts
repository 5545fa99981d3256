import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { END, graph, run } from '../../src/index.js';
import { agent, scriptedModel } from '../../src/model/index.js';
import { type Served, serve } from '../../src/server.js';
import { SqliteStore } from '../../src/sqlite.js';
import { describeBrowser, launchBrowser, screenshot } from './fixtures/browser.js';
import { pageDir } from './fixtures/page-build.js';

// An agent's MCP tool calls on the web page, in a real headless Chromium over the real server:
// one allowed call with its input and result, and one refused call with its code.

vi.setConfig({ testTimeout: 30_000 });

const server = fileURLToPath(new URL('../model/fixtures/mcp-stdio-server.mjs', import.meta.url));
const investigator = graph('investigator', {
  state: z.object({ summary: z.string().default('') }),
})
  .node(
    'investigate',
    agent({
      model: scriptedModel([
        { toolCalls: [{ toolName: 'read_file', input: { path: 'src/price.js' } }] },
        { toolCalls: [{ toolName: 'delete_branch', input: { name: 'main' } }] },
        { object: { summary: 'price() multiplies floats' } },
      ]),
      prompt: () => 'Why is 0.29 priced at 28?',
      output: z.object({ summary: z.string() }),
      mcp: {
        repo: {
          transport: { type: 'stdio', command: process.execPath, args: [server] },
          allow: ['read_file'],
        },
      },
      maxTurns: 4,
    }),
    { writes: ['summary'] },
  )
  .edge('investigate', END)
  .entry('investigate')
  .compile();

let dir: string;
let store: SqliteStore;
let served: Served;
let browser: Browser;

describeBrowser('an agent activation on the web page', () => {
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'waymark-ui-tools-'));
    store = new SqliteStore({ path: join(dir, 'runs.db') });
    const [ui] = await Promise.all([
      pageDir(),
      run(investigator, {}, { store, runId: 'tools-done' }),
    ]);
    served = await serve({ store, graphs: [investigator], token: 'tools-token', ui });
    browser = await launchBrowser();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await served?.close();
    await store?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('lists its MCP tool calls with their input, result, duration, and the code of a refused one', async () => {
    const page = await browser.newPage({ viewport: { width: 1440, height: 1000 } });
    page.setDefaultTimeout(10_000);
    await page.goto(`${served.url}/ui/#token=${served.token}`);
    await page.evaluate(() => {
      (globalThis as unknown as { location: { hash: string } }).location.hash = '#/runs/tools-done';
    });
    await page.locator('.trow', { hasText: 'investigate' }).click();
    const table = page.getByTestId('tool-calls');
    await table.waitFor();
    const rows = await table.locator('tbody tr').evaluateAll((trs) =>
      trs.map((tr) => ({
        tool: tr.getAttribute('data-tool'),
        cells: [...tr.querySelectorAll('td')].map((td) => td.textContent ?? ''),
      })),
    );
    expect(rows.map((r) => r.tool)).toEqual(['repo.read_file', 'repo.delete_branch']);
    expect(rows[0]!.cells[1]).toContain('"path": "src/price.js"');
    expect(rows[0]!.cells[2]).toContain('return n * 100');
    expect(Number(rows[0]!.cells[3])).toBeGreaterThanOrEqual(0);
    expect(rows[1]!.cells[1]).toContain('"name": "main"');
    expect(rows[1]!.cells[2]).toContain('MCP_TOOL_DENIED');
    await screenshot(page, 'ui-tool-calls');
  });
});
