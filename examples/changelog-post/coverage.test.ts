import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { answer, MemoryStore, resume, run, type Store } from '../../src/index.js';
import { formatCoverage, graphCoverage } from '../../src/testing/index.js';
import changelogPost from './graph.js';

const input = JSON.parse(readFileSync(new URL('./input.json', import.meta.url), 'utf8'));
let dir: string;
const saved = process.env.WAYMARK_CMS_FILE;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'changelog-coverage-'));
  process.env.WAYMARK_CMS_FILE = join(dir, 'cms.json');
});

afterEach(() => {
  if (saved === undefined) delete process.env.WAYMARK_CMS_FILE;
  else process.env.WAYMARK_CMS_FILE = saved;
  rmSync(dir, { recursive: true, force: true });
});

async function reply(store: Store, runId: string, value: unknown) {
  const [wait] = await store.listWaits(runId, { open: true });
  await answer(store, runId, wait!.requestId, value, { by: 'editor' });
  return resume(store, changelogPost, runId);
}

describe('the changelog-post example, covered', () => {
  it('its scenarios (changelog-post.test.ts) take every declared route and error edge', async () => {
    const store = new MemoryStore();
    // The invented claim goes back to draft, a rejection goes back again, an approval publishes.
    await run(changelogPost, input, { store, runId: 'r' });
    await reply(store, 'r', { approved: false, note: 'say when amount_decimal goes' });
    await reply(store, 'r', { approved: true });
    const coverage = graphCoverage(changelogPost);

    await coverage.record(store);

    const report = coverage.report();
    expect(report.missed.filter((i) => i.kind === 'route' || i.kind === 'error')).toEqual([]);
    expect(formatCoverage(report)).toContain('routes    100%  4/4');
  });
});
