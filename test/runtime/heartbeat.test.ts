// ctx.heartbeat() and idleTimeoutMs (Temporal's heartbeat timeout; what LangGraph.js users ask
// for around long model streams): an attempt that stops saying it is alive is timed out, one that
// keeps saying so runs as long as it needs, and its last heartbeat is kept in the trace.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { END, enqueue, graph, loadTrace, run } from '../../src/index.js';
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
