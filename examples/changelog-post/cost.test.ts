import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { boundOf } from '../../src/cost/bound.js';
import { answer, MemoryStore, resume, rewind, run, type Store } from '../../src/index.js';
import { expectedCost } from '../../src/runtime/ops/expected.js';
import { planResume, planRewind } from '../../src/runtime/ops/plan.js';
import changelogPost from './graph.js';

// Seed 002's table, from the graph's declaration and the usage its runs record: 39k weighted
// tokens a post, a fact-check failure re-pays 12k, an editor's rejection re-pays 26k. Weighted
// by price: an output token costs four input tokens (gpt-4o-mini's $0.15 / $0.60 a million).
const weighted = (c: { inputTokens: number; outputTokens: number }) =>
  c.inputTokens + 4 * c.outputTokens;
/** The same from the dollars: a weighted token is an input token's price. */
const weightedByCost = (c: { costUsd: number }) => Math.round(c.costUsd / 0.15e-6);

let dir: string;
const saved = { cms: process.env.WAYMARK_CMS_FILE, faults: process.env.WAYMARK_FAULTS };
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'changelog-cost-'));
  process.env.WAYMARK_CMS_FILE = join(dir, 'cms.json');
  delete process.env.WAYMARK_FAULTS;
});
afterEach(() => {
  for (const [name, value] of [
    ['WAYMARK_CMS_FILE', saved.cms],
    ['WAYMARK_FAULTS', saved.faults],
  ] as const) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
  rmSync(dir, { recursive: true, force: true });
});

/** One whole post, approved and published: the recorded usage the plans are priced by. */
async function post(store: Store) {
  const first = await run(changelogPost, { version: '2.4.0' }, { store });
  const [wait] = await store.listWaits(first.runId, { open: true });
  await answer(store, first.runId, wait!.requestId, { approved: true }, { by: 'editor' });
  return resume(store, changelogPost, first.runId);
}

describe("the changelog post's bill", () => {
  it('its worst case, from the declaration: every loop at its cap, every retry spent', () => {
    const bound = boundOf(changelogPost);
    expect(bound.unbounded).toEqual([]);
    // draft: 4 visits x 3 attempts x 10k; fact-check 4 x 2 x 12k; select 3 x 6k; outline 3 x 5k.
    expect(bound.total).toMatchObject({ activations: 16, modelCalls: 78, tokens: 249_000 });
    expect(bound.total.costUsd).toBeCloseTo(0.1494, 6);
    expect(bound.path.map((s) => `${s.node} x${s.activations}`)).toEqual([
      'fetch x1',
      'select x1',
      'outline x1',
      'draft x4',
      'fact-check x4',
      'approve x4',
      'publish x1',
    ]);
  });

  it('39k weighted tokens a post, by the median of recorded usage per node', async () => {
    const store = new MemoryStore();
    expect((await post(store)).status).toBe('succeeded');
    const expected = await expectedCost(store, changelogPost);
    const per = Object.fromEntries(expected.nodes.map((n) => [n.node, weighted(n.perActivation)]));
    expect(per).toMatchObject({
      select: 6_000,
      outline: 7_000,
      draft: 14_000,
      'fact-check': 12_000,
    });
    // A post: each model step once, as when fact-check passes the first draft.
    const onePost = per.select! + per.outline! + per.draft! + per['fact-check']!;
    expect(onePost).toBe(39_000);
    // The scripted first draft invents a feature, so its runs draft and check twice: 65k.
    expect(weighted(expected.perRun)).toBe(65_000);
    expect(weightedByCost(expected.perRun)).toBe(65_000);
  });

  it('a fact-check failure: the resume reads four steps back and re-pays 12k', async () => {
    const store = new MemoryStore();
    await post(store);
    process.env.WAYMARK_FAULTS = 'fact-check';
    const failed = await run(changelogPost, { version: '2.4.0' }, { store });
    expect(failed.status).toBe('failed');
    delete process.env.WAYMARK_FAULTS;

    const plan = await planResume(store, changelogPost, failed.runId);
    expect(plan.readBack.map((s) => s.node)).toEqual(['fetch', 'select', 'outline', 'draft']);
    expect(plan.runAgain).toMatchObject([{ node: 'fact-check', basis: 'expected' }]);
    expect(weighted(plan.rePays)).toBe(12_000);
    expect(weightedByCost(plan.rePays)).toBe(12_000);

    // The resume then does what the plan said: fact-check is the first thing it pays for.
    const resumed = await resume(store, changelogPost, failed.runId);
    const paid = resumed.trace.entries.filter((e) => e.usage !== undefined);
    const firstAgain = paid.find((e) => e.node === 'fact-check')!;
    expect(weighted(firstAgain.usage!)).toBe(12_000);
  });

  it("an editor's rejection: rewinding to draft with the note re-pays 26k (draft, fact-check)", async () => {
    const store = new MemoryStore();
    const waiting = await run(changelogPost, { version: '2.4.0' }, { store });
    expect(waiting.status).toBe('waiting');
    const note = { notes: ['Lead with the scheduled exports.'] };

    const plan = await planRewind(store, changelogPost, waiting.runId, {
      to: 'draft',
      update: note,
    });
    expect(plan.runAgain.map((s) => s.node)).toEqual(['draft', 'fact-check']);
    expect(plan.readBack.map((s) => s.activation)).toEqual([
      'fetch:1',
      'select:1',
      'outline:1',
      'draft:1',
      'fact-check:1',
    ]);
    expect(weighted(plan.rePays)).toBe(26_000);

    // Without a note no input changes, so everything from draft on is read back.
    const same = await planRewind(store, changelogPost, waiting.runId, { to: 'draft' });
    expect(same.runAgain).toEqual([]);
    expect(same.rePays).toEqual({ inputTokens: 0, outputTokens: 0, costUsd: 0 });

    // And the rewind spends what the plan said.
    const rewound = await rewind(store, changelogPost, waiting.runId, {
      to: 'draft',
      update: note,
    });
    const spent = rewound.trace.entries
      .filter((e) => !e.reused && e.usage !== undefined)
      .reduce((sum, e) => sum + weighted(e.usage!), 0);
    expect(rewound.status).toBe('waiting');
    expect(spent).toBe(26_000);
  });
});
