import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  append,
  type Commit,
  type CompiledGraph,
  END,
  graph,
  MemoryStore,
  replace,
  resume,
  run,
  type Store,
  step,
} from '../../src/index.js';
import { decodeEvent, decodeSnapshot, encodeSnapshot } from '../../src/runtime/codec/codec.js';
import { dyingAt } from '../support/stores.js';
import { postGraph, reviewGraph } from './fixtures.js';

/** A store that keeps every snapshot the run commits (with snapshotEvery: 1, one per step), alone or in a group. */
function recording(store: Store): { store: Store; snapshots: Map<number, string> } {
  const snapshots = new Map<number, string>();
  const proxy = new Proxy(store, {
    get(target, key, receiver) {
      if (key === 'commit') {
        return async (runId: string, commit: Commit) => {
          await target.commit(runId, commit);
          if (commit.snapshot !== null) snapshots.set(commit.seq, commit.snapshot);
        };
      }
      // A store that takes a fold's steps as one group (MemoryStore serves workers too).
      if (key === 'commitAll' && 'commitAll' in target) {
        return async (runId: string, commits: readonly Commit[]) => {
          await (target as MemoryStore).commitAll(runId, commits);
          for (const commit of commits)
            if (commit.snapshot !== null) snapshots.set(commit.seq, commit.snapshot);
        };
      }
      const value = Reflect.get(target, key, receiver);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return { store: proxy, snapshots };
}

/**
 * Replays the stored events from the first snapshot and checks, after every one, that the
 * replayed snapshot encodes byte for byte as the live run's, and that the live snapshot,
 * decoded (branch states rebuilt from their updates), is the one the live run held.
 */
async function replayMatches(g: CompiledGraph, input: unknown): Promise<number> {
  const memory = new MemoryStore();
  const { store, snapshots } = recording(memory);
  await run(g as CompiledGraph, input as Record<string, unknown>, {
    store,
    runId: 'r',
    snapshotEvery: 1,
  });
  let replayed = decodeSnapshot(g, (await memory.snapshotAt('r', 0))!.data, 'r');
  let checked = 0;
  for (const stored of await memory.events('r')) {
    replayed = step(g, replayed, decodeEvent(stored.event, 'r', stored.seq)).snapshot;
    const live = snapshots.get(stored.seq);
    if (live === undefined) continue;
    expect(encodeSnapshot(replayed, g)).toBe(live);
    const loaded = decodeSnapshot(g, live, 'r');
    expect(loaded.fanOuts).toEqual(replayed.fanOuts);
    expect(loaded.state).toEqual(replayed.state);
    checked++;
  }
  return checked;
}

describe('a replay of a run with subgraphs and nested fan-outs is faithful', () => {
  it('for a subgraph on the main path', async () => {
    expect(await replayMatches(postGraph() as CompiledGraph, { text: 'one two three' })).toBe(6);
  });

  it('for a map of subgraphs, and a map inside a map inside a subgraph', async () => {
    const Rows = z.object({
      rows: z.array(z.array(z.number())),
      row: z.array(z.number()).default([]),
      cells: z.array(z.string()).default([]),
    });
    const inner = graph('cells', { state: Rows, reducers: { cells: append, row: replace } })
      .node('start', () => undefined, { reads: [], writes: [] })
      .node('row', (_s, ctx) => ({ row: ctx.item as number[] }), { reads: [], writes: ['row'] })
      .node('cell', (_s, ctx) => ({ cells: [String(ctx.item)] }), { reads: [], writes: ['cells'] })
      .node('row-done', () => ({ cells: ['|'] }), { reads: [], writes: ['cells'] })
      .node('done', () => undefined, { reads: [], writes: [] })
      .map('start', { over: 'rows', branch: 'row', join: 'done' })
      .map('row', { over: 'row', branch: 'cell', join: 'row-done' })
      .edge('cell', 'row-done')
      .edge('row-done', 'done')
      .edge('done', END)
      .entry('start')
      .compile();
    const Outer = z.object({
      texts: z.array(z.string()),
      verdicts: z.array(z.string()).default([]),
      cells: z.array(z.string()).default([]),
    });
    const g = graph('outer', { state: Outer, reducers: { verdicts: append, cells: append } })
      .node('split', () => undefined, { reads: [], writes: [] })
      .node('pick', () => undefined, { reads: [], writes: [] })
      .subgraph('review', reviewGraph(), {
        input: (_s) => ({ draft: 'one two three' }),
        output: (o) => ({ verdicts: [o.verdict] }),
        reads: [],
        writes: ['verdicts'],
      })
      .node('join', () => undefined, { reads: [], writes: [] })
      .subgraph('grid', inner, {
        input: () => ({ rows: [[1, 2], [3]] }),
        output: { cells: 'cells' },
        reads: [],
        writes: ['cells'],
      })
      .map('split', { over: 'texts', branch: 'pick', join: 'join' })
      .edge('pick', 'review')
      .edge('review', 'join')
      .edge('join', 'grid')
      .edge('grid', END)
      .entry('split')
      .compile();

    const checked = await replayMatches(g as CompiledGraph, { texts: ['a', 'b', 'c'] });

    expect(checked).toBeGreaterThan(20);
  });
});

describe('a subgraph whose state holds a Date', () => {
  it('reads the Date back as a Date after a crash, as the live child did', async () => {
    const Dated = z.object({ at: z.date().optional(), saw: z.string().default('') });
    const child = graph('dated', { state: Dated })
      .node('stamp', () => ({ at: new Date('2026-12-01T09:00:00.000Z') }))
      .node('check', (s) => ({ saw: s.at instanceof Date ? 'Date' : typeof s.at }))
      .edge('stamp', 'check')
      .edge('check', END)
      .entry('stamp')
      .compile();
    const g = graph('outer', { state: z.object({ saw: z.string().default('') }) })
      .subgraph('dated', child, { input: {}, output: { saw: 'saw' } })
      .edge('dated', END)
      .entry('dated')
      .compile();
    const store = new MemoryStore();
    await run(g, {}, { store: dyingAt(store, 3), runId: 'r' }).catch(() => 'died');

    const resumed = await resume(store, g, 'r');

    expect(resumed.state.saw).toBe('Date');
  });
});
