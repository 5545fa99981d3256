import { expect, it, vi } from 'vitest';
import { z } from 'zod';
import {
  all,
  answer,
  append,
  cancel,
  END,
  enqueue,
  graph,
  inspect,
  loadTrace,
  person,
  run,
  type StreamEvent,
  Worker,
  type WorkerEvent,
  type WorkerOptions,
  watch,
} from '../../src/index.js';
import { PostgresStore } from '../../src/postgres.js';
import { describePg, pgStoreForFile } from '../store/fixtures/postgres.js';
import { dyingAt } from '../support/stores.js';

// Workers on PostgreSQL, in this process: runs enqueued for them are folded and their nodes run
// by whichever worker claims the work, exactly as on SQLite in one process.

const db = pgStoreForFile();

const State = z.object({
  log: z.array(z.string()).default([]),
  items: z.array(z.string()).default([]),
  approved: z.boolean().default(false),
});
const reducers = { log: append };

/** Runs `workers` workers until `done` resolves, then drains them. */
async function withWorkers<T>(
  graphs: Parameters<typeof Worker.prototype.run> extends never
    ? never
    : ConstructorParameters<typeof Worker>[1],
  count: number,
  done: (events: WorkerEvent[]) => Promise<T>,
  options: WorkerOptions = {},
): Promise<T> {
  const stop = new AbortController();
  const events: WorkerEvent[] = [];
  const running = Array.from({ length: count }, () =>
    new Worker(db.store, graphs, {
      leaseMs: 5_000,
      pollMs: 50,
      onEvent: (e) => events.push(e),
      ...options,
    }).run(stop.signal),
  );
  try {
    return await done(events);
  } finally {
    stop.abort();
    await Promise.all(running);
  }
}

/** Polls until the run has stopped (any status but running). */
async function settled(runId: string, timeoutMs = 20_000) {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const record = await db.store.getRun(runId);
    if (record !== undefined && record.status !== 'running') return record;
    if (Date.now() > until)
      throw new Error(`run ${runId} is still ${record?.status} after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describePg('workers on PostgreSQL', () => {
  const chain = graph('chain', { state: State, reducers })
    .node('a', () => ({ log: ['a'] }))
    .node('b', () => ({ log: ['b'] }))
    .node('c', () => ({ log: ['c'] }), { terminal: true })
    .edge('a', 'b')
    .edge('b', 'c')
    .entry('a')
    .compile();

  it('runs enqueued runs to their end: every activation completes once, in one history per run', async () => {
    const ids = await Promise.all(
      Array.from({ length: 12 }, (_, i) => enqueue(db.store, chain, {}, { runId: `c${i}` })),
    );
    await withWorkers([chain], 3, async () => {
      for (const id of ids) expect((await settled(id)).status).toBe('succeeded');
    });
    for (const id of ids) {
      const view = await inspect(db.store, chain, id);
      expect(view.snapshot.state.log).toEqual(['a', 'b', 'c']);
      expect(view.trace.path).toEqual(['a', 'b', 'c']);
      const completed = (await db.store.events(id)).filter((e) => e.event.includes('"completed"'));
      expect(completed).toHaveLength(3);
    }
    expect(await db.store.listTasks('c0')).toEqual([]);
    expect(await db.store.inbox('c0')).toEqual([]);
  });

  it('folds read what they fold in the claim: no load of a run or of its inbox of their own', async () => {
    const loads = vi.spyOn(db.store, 'loadRun');
    const inboxes = vi.spyOn(db.store, 'inbox');
    const claims = vi.spyOn(db.store, 'claimAndLoadRuns');
    try {
      const id = await enqueue(db.store, chain, {}, { runId: 'reads' });
      await withWorkers([chain], 1, async () => {
        expect((await settled(id)).status).toBe('succeeded');
      });
      expect(claims).toHaveBeenCalled();
      expect(loads).not.toHaveBeenCalled();
      expect(inboxes).not.toHaveBeenCalled();
    } finally {
      vi.restoreAllMocks();
    }
  });

  it('writes a snapshot every 100 events however few each fold commits, so a load replays at most 100', async () => {
    const steps = 400;
    const longGraph = graph('long', { state: State, reducers })
      .node('tick', (s) => ({ log: [String(s.log.length)] }), { visits: steps })
      .route('tick', (s) => (s.log.length >= steps ? END : 'tick'), ['tick', END])
      .entry('tick')
      .compile();
    const id = await enqueue(db.store, longGraph, {});
    // Each fold here commits one completion or two: the next task is claimed only after it.
    // The workers stop past seq 150, with the run still running (a stopped run's last commit
    // is a snapshot of its own).
    await withWorkers([longGraph], 2, async () => {
      for (let seen = 0; seen < 150; ) {
        await new Promise((resolve) => setTimeout(resolve, 5));
        seen = (await db.store.getRun(id))!.seq;
      }
    });
    const loaded = (await db.store.loadRun(id))!;
    expect(loaded.run.status).toBe('running');
    expect(loaded.snapshot.seq).toBeGreaterThanOrEqual(100);
    expect(loaded.events.length).toBeLessThan(100);
  }, 60_000);

  it('spreads a fan-out and a 50-item map over the workers, merging in branch order', async () => {
    const ran = new Set<string>();
    const fan = graph('fan', { state: State, reducers })
      .node('split', () => ({ items: Array.from({ length: 50 }, (_, i) => `i${i}`) }))
      .node(
        'each',
        async (_s, ctx) => {
          ran.add(ctx.activationId);
          await new Promise((resolve) => setTimeout(resolve, Math.random() * 10));
          return { log: [String(ctx.item)] };
        },
        { writes: ['log'] },
      )
      .node('merge', () => ({}), { join: all(), terminal: true })
      .map('split', { over: 'items', branch: 'each', join: 'merge', concurrency: 10 })
      .edge('each', 'merge')
      .entry('split')
      .compile();
    const id = await enqueue(db.store, fan, {});
    await withWorkers([fan], 3, async () => expect((await settled(id)).status).toBe('succeeded'));
    const view = await inspect(db.store, fan, id);
    expect(view.snapshot.state.log).toEqual(Array.from({ length: 50 }, (_, i) => `i${i}`));
    expect(ran.size).toBe(50);
  });

  it("a run served by workers is watched live from another store: its nodes' emits and every step, once each", async () => {
    const fan = graph('watched-fan', { state: State, reducers })
      .node('split', () => ({ items: Array.from({ length: 12 }, (_, i) => `i${i}`) }))
      .node(
        'each',
        async (_s, ctx) => {
          ctx.emit('picked', { item: ctx.item });
          await new Promise((resolve) => setTimeout(resolve, Math.random() * 10));
          return { log: [String(ctx.item)] };
        },
        { writes: ['log'] },
      )
      .node('merge', () => ({}), { join: all(), terminal: true })
      .map('split', { over: 'items', branch: 'each', join: 'merge', concurrency: 4 })
      .edge('each', 'merge')
      .entry('split')
      .compile();
    const id = await enqueue(db.store, fan, {});
    const elsewhere = await PostgresStore.open({ pool: db.pool, schema: db.schema });
    try {
      const events = await withWorkers([fan], 2, async () => {
        const seen: StreamEvent[] = [];
        for await (const event of watch(elsewhere, fan, id, { pollMs: 5 })) seen.push(event);
        return seen;
      });
      expect(events.at(-1)).toMatchObject({ type: 'run', status: 'succeeded' });
      const picked = events
        .filter((e) => e.type === 'custom')
        .map((e) => e.type === 'custom' && e.data);
      expect(picked).toHaveLength(12);
      expect(new Set(picked.map((p) => JSON.stringify(p))).size).toBe(12);
      const whole: StreamEvent[] = [];
      for await (const event of watch(elsewhere, fan, id, { follow: false })) whole.push(event);
      expect(events).toEqual(whole);
    } finally {
      await elsewhere.close();
    }
  });

  it('a person wait: the run waits holding nothing, an answer wakes it, any worker continues it', async () => {
    const approval = graph('approval', { state: State, reducers })
      .node('draft', () => ({ log: ['draft'] }))
      .node('approve', person({ prompt: 'publish?', answer: z.object({ approved: z.boolean() }) }))
      .node('publish', () => ({ log: ['publish'] }), { terminal: true })
      .edge('draft', 'approve')
      .edge('approve', 'publish')
      .entry('draft')
      .compile();
    const id = await enqueue(db.store, approval, {});
    await withWorkers([approval], 2, async () => {
      expect((await settled(id)).status).toBe('waiting');
      await answer(db.store, id, `${id}/approve:1`, { approved: true }, { by: 'ana' });
      const until = Date.now() + 10_000;
      while ((await db.store.getRun(id))?.status !== 'succeeded') {
        if (Date.now() > until) throw new Error('the answer did not continue the run');
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    });
    expect((await inspect(db.store, approval, id)).snapshot.state).toMatchObject({
      approved: true,
      log: ['draft', 'publish'],
    });
  });

  it('runs subgraphs on workers: a child inside the run, its wait answered through the parent', async () => {
    const { askGraph, postGraph } = await import('../subgraph/fixtures.js');
    const calls: Record<string, number> = {};
    const post = postGraph(calls);
    const ask = askGraph(calls);
    const posted = await enqueue(db.store, post, { text: ' a long draft here ' });
    const asked = await enqueue(db.store, ask, { text: 'notes' });
    await withWorkers([post, ask], 2, async () => {
      expect((await settled(posted)).status).toBe('succeeded');
      expect((await settled(asked)).status).toBe('waiting');
      await answer(db.store, asked, `${asked}/ask/approve:1`, { approved: true }, { by: 'ana' });
      const until = Date.now() + 10_000;
      while ((await db.store.getRun(asked))?.status !== 'succeeded') {
        if (Date.now() > until) throw new Error('the answer did not continue the child');
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    });
    const view = await inspect(db.store, post, posted);
    expect(view.snapshot.state).toMatchObject({ verdict: 'accept', published: true });
    expect(view.trace.path).toEqual([
      'prep',
      'review/read',
      'review/score',
      'review/accept',
      'publish',
    ]);
    expect((await inspect(db.store, ask, asked)).snapshot.state).toMatchObject({
      result: 'published notes!',
    });
    // Each body ran once, on whichever worker claimed it; the child's draft did not run again
    // after the wait.
    expect(calls).toMatchObject({
      prep: 1,
      read: 1,
      score: 1,
      accept: 1,
      publish: 1,
      draft: 1,
      finish: 1,
    });
  });

  it('retries with backoff as data, and a cancellation from outside deletes what is queued', {
    timeout: 30_000,
  }, async () => {
    let calls = 0;
    const flaky = graph('flaky', { state: State, reducers })
      .node(
        'call',
        () => {
          calls++;
          if (calls < 2) throw new Error('503');
          return { log: ['ok'] };
        },
        { retry: { attempts: 3, backoffMs: 100 } },
      )
      .edge('call', END)
      .entry('call')
      .compile();
    const id = await enqueue(db.store, flaky, {});
    await withWorkers([flaky], 1, async () => expect((await settled(id)).status).toBe('succeeded'));
    expect(calls).toBe(2);
    expect((await loadTrace(db.store, id)).entries.map((e) => [e.attempt, e.status])).toEqual([
      [1, 'failed'],
      [2, 'succeeded'],
    ]);

    const slow = graph('slow', { state: State, reducers })
      .node(
        'wait',
        () =>
          new Promise<{ log: string[] }>((resolve) =>
            setTimeout(() => resolve({ log: ['late'] }), 60_000),
          ),
      )
      .edge('wait', END)
      .entry('wait')
      .compile();
    const parked = await enqueue(db.store, slow, {});
    // Every activation through the task queue: what is queued is what a cancellation deletes.
    await withWorkers(
      [slow],
      1,
      async () => {
        const until = Date.now() + 10_000;
        while ((await db.store.listTasks(parked)).length === 0) {
          if (Date.now() > until) throw new Error('no task was scheduled');
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        await cancel(db.store, slow, parked, { reason: 'not needed' });
        expect(await db.store.listTasks(parked)).toEqual([]);
        expect((await settled(parked)).status).toBe('cancelled');
      },
      { inline: false },
    );
  });

  it('takes over a run whose in-process driver died, and runs only what did not complete', async () => {
    let bRuns = 0;
    const g = graph('taken', { state: State, reducers })
      .node('a', () => ({ log: ['a'] }))
      .node('b', () => {
        bRuns++;
        return { log: ['b'] };
      })
      .node('c', () => ({ log: ['c'] }), { terminal: true })
      .edge('a', 'b')
      .edge('b', 'c')
      .entry('a')
      .compile();
    // seq 1 started, 2 a completed; b's completion (seq 3) never lands: the driver is gone.
    await expect(run(g, {}, { store: dyingAt(db.store, 3), runId: 'd' })).rejects.toThrow(
      'the process died',
    );
    await withWorkers([g], 2, async () => expect((await settled('d')).status).toBe('succeeded'));
    expect((await inspect(db.store, g, 'd')).snapshot.state.log).toEqual(['a', 'b', 'c']);
    expect(bRuns).toBe(2); // its first run's completion never landed
  });

  it('registers each worker with the graphs it runs, and drops it when it stops', async () => {
    await withWorkers([chain], 2, async () => {
      let workers = await db.store.listWorkers();
      for (let i = 0; workers.length < 2 && i < 100; i++) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        workers = await db.store.listWorkers();
      }
      expect(workers).toHaveLength(2);
      expect(workers[0]).toMatchObject({
        live: true,
        graphs: [{ name: 'chain', hash: chain.hash }],
      });
    });
    expect(await db.store.listWorkers()).toEqual([]);
  });

  it('an enqueued run wakes an idle worker at once: it does not wait for the next poll', {
    timeout: 20_000,
  }, async () => {
    const stop = new AbortController();
    // A poll a minute apart: only a notification can start the run within the test's time.
    const idle = new Worker(db.store, [chain], { leaseMs: 5_000, pollMs: 60_000 });
    const working = idle.run(stop.signal);
    try {
      await new Promise((resolve) => setTimeout(resolve, 200)); // it is idle, waiting
      const id = await enqueue(db.store, chain, {});
      expect((await settled(id, 15_000)).status).toBe('succeeded');
    } finally {
      stop.abort();
      await working;
    }
  });

  it('behind PgBouncer in transaction mode (notify: false) workers find their work by polling', async () => {
    const pollOnly = await PostgresStore.open({ pool: db.pool, schema: db.schema, notify: false });
    const stop = new AbortController();
    const working = new Worker(pollOnly, [chain], { leaseMs: 5_000, pollMs: 50 }).run(stop.signal);
    try {
      const id = await enqueue(pollOnly, chain, {});
      expect((await settled(id)).status).toBe('succeeded');
    } finally {
      stop.abort();
      await working;
      await pollOnly.close();
    }
  });
});
