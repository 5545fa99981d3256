// ctx.heartbeat() and idleTimeoutMs (Temporal's heartbeat timeout; what LangGraph.js users ask
// for around long model streams): an attempt that stops saying it is alive is timed out, one that
// keeps saying so runs as long as it needs, and its last heartbeat is kept in the trace.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  END,
  enqueue,
  graph,
  loadTrace,
  MemoryStore,
  run,
  type StreamEvent,
  watch,
} from '../../src/index.js';
import { describePg, pgStoreForFile } from '../store/fixtures/postgres.js';
import { stores } from '../support/stores.js';
import { workUntilSettled } from '../support/worker-runs.js';

const State = z.object({ chunks: z.number().default(0) });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A node that streams `chunks` chunks `gapMs` apart, heartbeating after each when told to. */
function streaming(chunks: number, gapMs: number, beat: boolean, idleTimeoutMs = 60) {
  return graph('stream', { state: State })
    .node(
      'generate',
      async (_s, ctx) => {
        for (let i = 1; i <= chunks; i++) {
          await sleep(gapMs);
          if (ctx.signal.aborted) throw ctx.signal.reason;
          if (beat) ctx.heartbeat({ chunk: i });
        }
        return { chunks };
      },
      { idleTimeoutMs },
    )
    .edge('generate', END)
    .entry('generate')
    .compile();
}

describe('heartbeats and an idle timeout', () => {
  it('an attempt that heartbeats runs past its idle timeout many times over', async () => {
    // 10 chunks 20 ms apart: 200 ms, against an idle timeout of 60 ms.
    const result = await run(streaming(10, 20, true), {});
    expect(result.status).toBe('succeeded');
    expect(result.state.chunks).toBe(10);
  });

  it('one that goes quiet for longer than idleTimeoutMs fails with NODE_TIMEOUT, its signal aborted', async () => {
    const result = await run(streaming(3, 150, false), {});
    expect(result.status === 'failed' && result.error).toMatchObject({
      code: 'NODE_TIMEOUT',
      class: 'timeout',
      message: 'node "generate" sent no heartbeat for 60 ms',
      details: { idleTimeoutMs: 60 },
    });
  });

  it('a heartbeat with no idle timeout is allowed and costs nothing but its record', async () => {
    const g = graph('plain', { state: State })
      .node('work', (_s, ctx) => {
        for (let i = 0; i < 1000; i++) ctx.heartbeat();
        ctx.heartbeat({ done: 1000 });
        return { chunks: 1 };
      })
      .edge('work', END)
      .entry('work')
      .compile();
    const result = await run(g, {});
    expect(result.status).toBe('succeeded');
    expect(result.trace.entries[0]?.heartbeat).toMatchObject({ details: { done: 1000 } });
  });

  it('refuses an idleTimeoutMs that is not a positive number of milliseconds', () => {
    const diagnostics = graph('bad', { state: State })
      .node('n', () => ({}), { idleTimeoutMs: -1 })
      .edge('n', END)
      .entry('n')
      .validate();
    expect(diagnostics.map((d) => d.code)).toEqual(['OPTION_INVALID']);
  });
});

describe('heartbeats told live', () => {
  it("reach the drive's watchers as they happen, at most one a second, and are never recorded", async () => {
    let now = 10_000;
    const clock = { now: () => now, sleep: async () => {} };
    const g = graph('live', { state: State })
      .node('generate', (_s, ctx) => {
        // Sent at 0, 0.4, 0.9, 1.0, 1.5 and 2.2 s: the watcher hears those at 0, 1.0 and 2.2 s.
        for (const [t, chunk] of [
          [0, 1],
          [400, 2],
          [900, 3],
          [1000, 4],
          [1500, 5],
          [2200, 6],
        ]) {
          now = 10_000 + t!;
          ctx.heartbeat({ chunk });
        }
        return { chunks: 6 };
      })
      .edge('generate', END)
      .entry('generate')
      .compile();
    const store = new MemoryStore();
    const seen: StreamEvent[] = [];
    const result = await run(g, {}, { store, runId: 'h', clock, watch: (e) => seen.push(e) });
    expect(result.status).toBe('succeeded');
    const beats = seen.filter((e) => e.type === 'heartbeat');
    expect(beats.map((e) => [e.at, e.details])).toEqual([
      [10_000, { chunk: 1 }],
      [11_000, { chunk: 4 }],
      [12_200, { chunk: 6 }],
    ]);
    expect(beats[0]).toMatchObject({ ephemeral: true, activation: 'generate:1', attempt: 1 });
    // Before the completion they belong to, and absent from what the store tells later.
    const completed = seen.findIndex((e) => e.type === 'activation.completed');
    expect(seen.findLastIndex((e) => e.type === 'heartbeat')).toBeLessThan(completed);
    const stored: StreamEvent[] = [];
    for await (const e of watch(store, g, 'h', { follow: false })) stored.push(e);
    expect(stored).toEqual(seen.filter((e) => e.type !== 'heartbeat'));
    // The last one is the attempt's, in its trace.
    expect(result.trace.entries[0]?.heartbeat).toEqual({ at: 12_200, details: { chunk: 6 } });
  });
});

describe.each(stores)('the last heartbeat on %s', (_, makeStore) => {
  it('is kept with the attempt, in the stored trace, also for an attempt that timed out', async () => {
    const store = makeStore();
    const g = graph('quiet', { state: State })
      .node(
        'generate',
        async (_s, ctx) => {
          ctx.heartbeat({ chunk: 1 });
          await sleep(200);
          return { chunks: 1 };
        },
        { idleTimeoutMs: 50 },
      )
      .edge('generate', END)
      .entry('generate')
      .compile();
    const result = await run(g, {}, { store, runId: 'q' });
    expect(result.status).toBe('failed');
    const trace = await loadTrace(store, 'q');
    expect(trace.entries[0]).toMatchObject({
      status: 'failed',
      heartbeat: { details: { chunk: 1 } },
      error: { code: 'NODE_TIMEOUT' },
    });
  });
});

const db = pgStoreForFile();

describePg('heartbeats on a PostgreSQL worker', () => {
  it('a worker keeps a heartbeating attempt alive past its idle timeout and keeps its last heartbeat', async () => {
    const g = streaming(8, 20, true);
    const id = await enqueue(db.store, g, {});
    await workUntilSettled(db.store, [g], [id]);
    expect((await db.store.getRun(id))?.status).toBe('succeeded');
    const trace = await loadTrace(db.store, id);
    expect(trace.entries[0]?.heartbeat).toMatchObject({ details: { chunk: 8 } });
  });
});
