import { expect, it } from 'vitest';
import { z } from 'zod';
import { answer, append, enqueue, graph, person, resume, Worker } from '../../src/index.js';
import { describePg, pgStoreForFile } from '../store/fixtures/postgres.js';
import { activationsOf, segments, tracing } from './tracing.js';

// Workers on PostgreSQL run node bodies in other processes than the one that started the run:
// their spans hang under the trace context the run stored, not under a segment of their own.

const db = pgStoreForFile({ emptied: false });

const State = z.object({
  log: z.array(z.string()).default([]),
  approved: z.boolean().default(false),
});
const chain = graph('w-chain', { state: State, reducers: { log: append } })
  .node('a', () => ({ log: ['a'] }))
  .node('approve', person({ prompt: 'Ship it?', answer: z.object({ approved: z.boolean() }) }))
  .node('b', () => ({ log: ['b'] }), { terminal: true })
  .edge('a', 'approve')
  .edge('approve', 'b')
  .entry('a')
  .compile();

async function until(runId: string, status: string) {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const record = await db.store.getRun(runId);
    if (record?.status === status) return;
    if (Date.now() > deadline) throw new Error(`run ${runId} is ${record?.status}, not ${status}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describePg('spans of runs driven by workers', () => {
  it("an enqueued run is one short segment; every task a worker runs is its child, with the worker's id", async () => {
    const t = tracing();
    const runId = await enqueue(db.store, chain, {}, { runId: 'w1', telemetry: t.telemetry });
    const stop = new AbortController();
    const worker = new Worker(db.store, [chain], { pollMs: 20, telemetry: t.telemetry });
    const working = worker.run(stop.signal);
    try {
      await until(runId, 'waiting');
      await answer(db.store, runId, 'w1/approve:1', { approved: true }, { by: 'lead' });
      await until(runId, 'succeeded');
    } finally {
      stop.abort();
      await working;
    }

    const [segment, ...more] = segments(t.spans());
    expect(more).toEqual([]);
    expect(segment!.attributes).toMatchObject({
      'waymark.segment.cause': 'enqueued',
      'waymark.run.id': 'w1',
    });
    const tasks = activationsOf(t.spans(), segment!);
    // A person's answer is applied by a fold, which runs no body: only a and b ran on the worker.
    expect(tasks.map((s) => s.name)).toEqual(['invoke_node a', 'invoke_node b']);
    for (const span of tasks) {
      expect(span.spanContext().traceId).toBe(segment!.spanContext().traceId);
      expect(span.attributes).toMatchObject({
        'waymark.run.id': 'w1',
        'waymark.worker.id': worker.id,
        'waymark.recorded': true,
        'waymark.status': 'succeeded',
      });
    }
  });

  it('an in-process resume of a worker-started run links to the segment that enqueued it', async () => {
    const t = tracing();
    const runId = await enqueue(db.store, chain, {}, { runId: 'w2', telemetry: t.telemetry });
    const stop = new AbortController();
    const working = new Worker(db.store, [chain], { pollMs: 20, telemetry: t.telemetry }).run(
      stop.signal,
    );
    try {
      await until(runId, 'waiting');
    } finally {
      stop.abort();
      await working;
    }
    await answer(db.store, runId, 'w2/approve:1', { approved: true }, { by: 'lead' });

    const done = await resume(db.store, chain, runId, { telemetry: t.telemetry });

    expect(done.status).toBe('succeeded');
    const [enqueued, resumed] = segments(t.spans());
    expect(resumed!.links.map((l) => l.context.spanId)).toEqual([enqueued!.spanContext().spanId]);
    expect(activationsOf(t.spans(), resumed!).map((s) => s.name)).toEqual([
      'invoke_node approve',
      'invoke_node b',
    ]);
  });
});
