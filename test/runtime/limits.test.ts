import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  END,
  graph,
  isWaymarkError,
  MemoryStore,
  resume,
  run,
  type Store,
} from '../../src/index.js';
import { SqliteStore } from '../../src/sqlite.js';
import type { LimitStore } from '../../src/store/limits.js';
import { fakeClock } from '../support/clock.js';

// In process, a run over its key's limit is created queued and this process starts it itself
// once a slot is handed to it (it looks on its clock); nothing runs over the limit meanwhile.

const State = z.object({ customer: z.string(), n: z.number().default(0) });

function gated(gates: Map<string, () => void>, started: string[]) {
  return graph('support', {
    state: State,
    limits: { key: (input) => input.customer, concurrency: 1 },
  })
    .node('work', async (_s, ctx) => {
      started.push(ctx.runId);
      await new Promise<void>((resolve) => gates.set(ctx.runId, resolve));
      return { n: 1 };
    })
    .edge('work', END)
    .entry('work')
    .compile();
}

async function settle(): Promise<void> {
  for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve));
}

async function queuesInProcess(store: Store & LimitStore) {
  const clock = fakeClock();
  const gates = new Map<string, () => void>();
  const started: string[] = [];
  const g = gated(gates, started);
  const first = run(g, { customer: 'a' }, { store, clock, runId: 'r1' });
  await settle();
  const second = run(g, { customer: 'a' }, { store, clock, runId: 'r2' });
  const other = run(g, { customer: 'b' }, { store, clock, runId: 'o1' });
  await settle();
  expect(started.sort()).toEqual(['o1', 'r1']);
  expect((await store.getRun('r2'))?.status).toBe('waiting');
  expect(await store.runLimit('r2')).toMatchObject({ key: 'a', state: 'queued' });
  // A resume of the queued run says why it waits, and changes nothing.
  const refused = await resume(store, g, 'r2').catch((e: unknown) => e);
  expect(isWaymarkError(refused) && refused.code).toBe('RUN_QUEUED');
  await clock.advance(5_000);
  expect(started).not.toContain('r2');
  gates.get('r1')!();
  expect((await first).status).toBe('succeeded');
  // Handed r1's slot, r2 starts at this process's next look.
  await clock.advance(1_000);
  await settle();
  expect(started).toContain('r2');
  gates.get('r2')!();
  gates.get('o1')!();
  expect((await second).status).toBe('succeeded');
  expect((await other).status).toBe('succeeded');
  expect(await store.listQueued()).toEqual([]);
}

describe('concurrency limits in process', () => {
  const dir = mkdtempSync(join(tmpdir(), 'waymark-limits-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('on the memory store, a run over the limit waits queued and starts when a slot frees', async () => {
    await queuesInProcess(new MemoryStore());
  });

  it('on SQLite, a run over the limit waits queued and starts when a slot frees', async () => {
    const store = new SqliteStore(join(dir, 'a.db'));
    try {
      await queuesInProcess(store);
    } finally {
      await store.close();
    }
  });

  it('a key function that returns no string refuses the run, recording nothing', async () => {
    const store = new MemoryStore();
    const g = graph('support', {
      state: State,
      limits: {
        key: (input) => (input.customer === 'x' ? (undefined as never) : input.customer),
        concurrency: 1,
      },
    })
      .node('work', () => ({ n: 1 }))
      .edge('work', END)
      .entry('work')
      .compile();
    await expect(run(g, { customer: 'x' }, { store })).rejects.toMatchObject({
      code: 'LIMIT_KEY_INVALID',
    });
    expect(await store.listRuns()).toEqual([]);
  });

  it('the builder types the key function against the state', () => {
    graph('typed', {
      state: State,
      // @ts-expect-error: the state has no field "tenant"
      limits: { key: (input) => input.tenant, concurrency: 1 },
    });
    graph('typed', {
      state: State,
      // @ts-expect-error: a key is a string, not a number
      limits: { key: (input) => input.n, concurrency: 1 },
    });
  });

  it('a limit out of range is OPTION_INVALID at compile', () => {
    const build = (limits: unknown) =>
      graph('bad', { state: State, limits: limits as never })
        .node('work', () => ({ n: 1 }))
        .edge('work', END)
        .entry('work');
    expect(
      build({ key: (s: { customer: string }) => s.customer, concurrency: 0 }).validate(),
    ).toMatchObject([
      { code: 'OPTION_INVALID', message: expect.stringContaining('limits.concurrency') },
    ]);
    expect(build({ key: 'customer', concurrency: 2 }).validate()).toMatchObject([
      { code: 'OPTION_INVALID', message: expect.stringContaining('limits.key') },
    ]);
    expect(() => build({ concurrency: 1.5, key: () => 'k' }).compile()).toThrow(/GRAPH_INVALID/);
  });
});
