import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { END, graph, loadTrace, MemoryStore, run } from '../../src/index.js';
import { stores } from '../support/stores.js';

// A run's trace is stored with its events, entry by entry, and read back by loadTrace (the
// CLI's `waymark trace`, `show`, `graph --run`). Each entry is stored as an array of its fields,
// not an object, because a durable step writes its trace entry on every commit.

const State = z.object({ tries: z.number().default(0), done: z.boolean().default(false) });

/** `draft` reports usage and turns; `check` fails once, is retried, then passes. */
function drafting() {
  let checks = 0;
  return graph('drafting', { state: State })
    .node('draft', (_s, ctx) => {
      ctx.usage({ inputTokens: 120, outputTokens: 30, model: 'scripted:writer' });
      ctx.turn({ turn: 1, durationMs: 2, toolCalls: ['search'] });
      return { tries: 1 };
    })
    .node(
      'check',
      () => {
        checks++;
        if (checks === 1) throw new Error('checker busy');
        return { done: true };
      },
      { retry: { attempts: 2, backoffMs: 1 } },
    )
    .edge('draft', 'check')
    .edge('check', END)
    .entry('draft')
    .compile();
}

describe.each(stores)('the stored trace, with the %s store', (_name, makeStore) => {
  it('reads back exactly the entries the run recorded, optional fields included', async () => {
    const store = makeStore();
    const result = await run(drafting(), {}, { store });

    expect(result.status).toBe('succeeded');
    const stored = await loadTrace(store, result.runId);
    expect(stored).toEqual(result.trace);
    expect(stored.entries.map((e) => [e.node, e.attempt, e.status, e.retried])).toEqual([
      ['draft', 1, 'succeeded', false],
      ['check', 1, 'failed', true],
      ['check', 2, 'succeeded', false],
    ]);
    expect(stored.entries[0]).toMatchObject({
      usage: { inputTokens: 120, outputTokens: 30, model: 'scripted:writer' },
      turns: [{ turn: 1, durationMs: 2, toolCalls: ['search'] }],
    });
    expect(stored.entries[1]?.error).toMatchObject({ code: 'NODE_FAILED' });
    expect(stored.entries[2]).not.toHaveProperty('error');
  });

  it('stores each entry as an array of its fields, less than half the size of the object', async () => {
    const store = makeStore();
    const result = await run(drafting(), {}, { store });

    const traces = (await store.events(result.runId)).flatMap((e) =>
      e.trace === null ? [] : [e.trace],
    );
    const first = JSON.parse(traces[0]!) as unknown[][];
    expect(first[0]?.slice(0, 8)).toEqual([
      'draft',
      'draft:1',
      null,
      1,
      result.trace.entries[0]?.startedAt,
      result.trace.entries[0]?.durationMs,
      'succeeded',
      false,
    ]);
    const plain = (await store.events(result.runId)).at(-1)!.trace!;
    expect(plain.length).toBeLessThan(JSON.stringify([result.trace.entries[2]]).length / 2);
  });
});

describe('traces written before store format 2', () => {
  const entry = {
    node: 'fetch',
    activation: 'fetch:1',
    parent: null,
    attempt: 1,
    startedAt: 1_000,
    durationMs: 4,
    status: 'succeeded',
    retried: false,
  };

  async function storedRun(trace: string) {
    const store = new MemoryStore();
    await store.createRun({
      id: 'r1',
      graph: 'g',
      graphHash: 'h',
      graphVersion: 1,
      stateVersion: 1,
      createdAt: 0,
      status: 'running',
      snapshot: '{}',
    });
    await store.commit('r1', {
      seq: 1,
      at: 1_004,
      event: '{"type":"completed","activation":"fetch:1","update":{}}',
      trace,
      status: 'running',
      error: null,
      snapshot: null,
    });
    return store;
  }

  it('still read: an entry stored as an object comes back as it was', async () => {
    const store = await storedRun(JSON.stringify([entry]));
    expect(await loadTrace(store, 'r1')).toEqual({ entries: [entry], path: ['fetch'] });
  });

  it('a stored entry that is neither fails the run with STORE_CORRUPT', async () => {
    for (const damaged of [
      '[42]',
      '[["fetch","fetch:1"]]',
      '[["fetch","fetch:1",null,1,0,1,"ok",false]]',
    ]) {
      const store = await storedRun(damaged);
      await expect(loadTrace(store, 'r1')).rejects.toMatchObject({
        code: 'STORE_CORRUPT',
        message: expect.stringMatching(/the trace of event 1 holds/),
      });
    }
  });
});
