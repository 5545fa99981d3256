import { expect, it, vi } from 'vitest';
import { z } from 'zod';
import {
  all,
  append,
  cancel,
  END,
  enqueue,
  graph,
  inspect,
  Worker,
  type WorkerOptions,
} from '../../src/index.js';
import { systemClock } from '../../src/runtime/clock.js';
import { foldRun } from '../../src/runtime/worker/fold.js';
import { runTask } from '../../src/runtime/worker/run-task.js';
import type { Commit } from '../../src/store/store.js';
import { describePg, pgStoreForFile } from '../store/fixtures/postgres.js';
import { until } from './fixtures/until.js';

// A worker that folds a run and finds one activation to run next, with nothing else in flight,
// runs it itself under the run's lease (if it has room) instead of queueing a task: a chain's
// next node, a map's join, a one-node run. Fan-outs still go through the task queue.

const db = pgStoreForFile();

const State = z.object({
  log: z.array(z.string()).default([]),
  items: z.array(z.string()).default([]),
});
const reducers = { log: append };

/** A worker until `done` resolves; then it drains. */
async function withWorker<T>(
  graphs: ConstructorParameters<typeof Worker>[1],
  done: () => Promise<T>,
  options: WorkerOptions = {},
): Promise<T> {
  const stop = new AbortController();
  const working = new Worker(db.store, graphs, { leaseMs: 5_000, pollMs: 50, ...options }).run(
    stop.signal,
  );
  try {
    return await done();
  } finally {
    stop.abort();
    await working;
  }
}

const stopped = (runId: string) =>
  until(`run ${runId} stops`, async () => {
    const run = await db.store.getRun(runId);
    return run !== undefined && run.status !== 'running' ? run : undefined;
  });

describePg("a worker runs a run's sole next activation itself", () => {
  const chain = graph('held-chain', { state: State, reducers })
    .node('a', () => ({ log: ['a'] }))
    .node('b', () => ({ log: ['b'] }))
    .node('c', () => ({ log: ['c'] }), { terminal: true })
    .edge('a', 'b')
    .edge('b', 'c')
    .entry('a')
    .compile();

  it('a chain: no task is queued, each node is one commit, and the start commits with the first node', async () => {
    const commits = vi.spyOn(db.store, 'commitAll');
    const finishes = vi.spyOn(db.store, 'finishTasks');
    try {
      const id = await enqueue(db.store, chain, {}, { runId: 'chain' });
      await withWorker([chain], async () => expect((await stopped(id)).status).toBe('succeeded'));
      const ours = commits.mock.calls.filter(([runId]) => runId === id).map(([, c]) => c);
      expect(ours.map((c) => c.map((x) => JSON.parse(x.event).type))).toEqual([
        ['started', 'completed'],
        ['completed'],
        ['completed'],
      ]);
      const scheduled = ours.flat().flatMap((c: Commit) => c.schedule?.tasks ?? []);
      expect(scheduled).toEqual([]);
      expect(finishes).not.toHaveBeenCalled();
      const view = await inspect(db.store, chain, id);
      expect(view.snapshot.state.log).toEqual(['a', 'b', 'c']);
      expect(view.trace.path).toEqual(['a', 'b', 'c']);
      expect((await db.store.getRun(id))?.lease?.live).toBe(false);
    } finally {
      vi.restoreAllMocks();
    }
  });

  it('a fan-out goes to the task queue; the join runs on the worker that folds the last branch', async () => {
    const fan = graph('held-fan', { state: State, reducers })
      .node('split', () => ({ items: ['x', 'y', 'z'] }))
      .node('each', (_s, ctx) => ({ log: [String(ctx.item)] }), { writes: ['log'] })
      .node('merge', () => ({ log: ['merged'] }), { join: all(), terminal: true })
      .map('split', { over: 'items', branch: 'each', join: 'merge' })
      .edge('each', 'merge')
      .entry('split')
      .compile();
    const commits = vi.spyOn(db.store, 'commitAll');
    try {
      const id = await enqueue(db.store, fan, {}, { runId: 'fan' });
      await withWorker([fan], async () => expect((await stopped(id)).status).toBe('succeeded'));
      const scheduled = commits.mock.calls
        .filter(([runId]) => runId === id)
        .flatMap(([, c]) => c.flatMap((x: Commit) => x.schedule?.tasks ?? []))
        .map((t) => t.node);
      expect(scheduled).toEqual(['each', 'each', 'each']);
      expect((await inspect(db.store, fan, id)).snapshot.state.log).toEqual([
        'x',
        'y',
        'z',
        'merged',
      ]);
    } finally {
      vi.restoreAllMocks();
    }
  });

  it('a cancellation from another process stops the body it runs within a renewal', {
    timeout: 20_000,
  }, async () => {
    let aborted = false;
    let began = false;
    const slow = graph('held-slow', { state: State, reducers })
      .node('wait', async (_s, ctx) => {
        began = true;
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, 60_000);
          ctx.signal.addEventListener('abort', () => {
            aborted = true;
            clearTimeout(timer);
            resolve();
          });
        });
        return { log: ['late'] };
      })
      .edge('wait', END)
      .entry('wait')
      .compile();
    const id = await enqueue(db.store, slow, {}, { runId: 'slow' });
    await withWorker(
      [slow],
      async () => {
        await until('the body starts', async () => (began ? true : undefined));
        expect(await db.store.listTasks(id)).toEqual([]);
        await cancel(db.store, slow, id, { reason: 'not needed' });
        // Renewals come every 200 ms at this lease: the body hears of it long before its 60 s.
        await until('the body is stopped', async () => (aborted ? true : undefined), 5_000);
        expect((await stopped(id)).status).toBe('cancelled');
      },
      { leaseMs: 600 },
    );
    const events = (await db.store.events(id)).map((e) => JSON.parse(e.event).type);
    expect(events).toEqual(['cancelled']);
  });

  it('a worker that drains gives the run back: another worker runs the node, once recorded', {
    timeout: 20_000,
  }, async () => {
    let calls = 0;
    let letGo: () => void = () => {};
    const stuck = new Promise<void>((resolve) => {
      letGo = resolve;
    });
    const g = graph('held-drain', { state: State, reducers })
      .node('work', async () => {
        calls++;
        // The first body ignores its signal: the drain must not wait on it forever.
        if (calls === 1) await stuck;
        return { log: [`call ${calls}`] };
      })
      .edge('work', END)
      .entry('work')
      .compile();
    const id = await enqueue(db.store, g, {}, { runId: 'drained' });
    const stop = new AbortController();
    const first = new Worker(db.store, [g], { leaseMs: 1_000, pollMs: 50 }).run(stop.signal);
    await until('the first body starts', async () => (calls === 1 ? true : undefined));
    stop.abort();
    await first; // within its lease's length, though the body has not ended
    expect((await db.store.getRun(id))?.lease?.live).toBe(false);
    await withWorker([g], async () => expect((await stopped(id)).status).toBe('succeeded'));
    letGo();
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(calls).toBe(2);
    expect((await inspect(db.store, g, id)).snapshot.state.log).toEqual(['call 2']);
    const completed = (await db.store.events(id)).filter((e) => e.event.includes('"completed"'));
    expect(completed).toHaveLength(1);
  });
});

describePg('a fold that would hold the run', () => {
  const pair = graph('held-pair', { state: State, reducers })
    .node('a', () => ({ log: ['a'] }))
    .node('b', () => ({ log: ['b'] }), { terminal: true })
    .edge('a', 'b')
    .entry('a')
    .compile();
  const claim = {
    owner: 'me',
    leaseMs: 30_000,
    graphs: [{ name: pair.name, hash: pair.hash }],
    limit: 10,
  };

  it('gives back the slot it took when the run is taken over before its commit', async () => {
    const runId = await enqueue(db.store, pair, {}, { runId: 'stolen' });
    // a's task, run: its attempt waits in the inbox for a fold, which would hold b.
    for (const lease of (await db.store.claimAndLoadRuns(claim)).map((c) => c.lease))
      await foldRun(db.store, pair, lease, systemClock);
    for (const task of await db.store.claimTasks(claim))
      await runTask(db.store, pair, task, {
        clock: systemClock,
        signal: new AbortController().signal,
      });
    const [claimed] = await db.store.claimAndLoadRuns(claim);
    if (claimed === undefined || 'error' in claimed) throw new Error('no fold to claim');
    // Another process takes the run over (its lease is this one's epoch + 1).
    await db.store.acquire(runId, {
      owner: 'thief',
      leaseMs: 30_000,
      takeOver: claimed.lease.epoch,
    });
    let taken = 0;
    let freed = 0;
    const hold = () => {
      taken++;
      return { free: () => void freed++ };
    };
    await expect(
      foldRun(db.store, pair, claimed.lease, systemClock, claimed, { hold }),
    ).rejects.toMatchObject({ code: 'LEASE_LOST' });
    expect(taken).toBe(1);
    expect(freed).toBe(1);
  });
});
