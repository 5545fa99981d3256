import { afterEach, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { END, graph, Worker } from '../../src/index.js';
import { describePg, pgStoreForFile } from '../store/fixtures/postgres.js';

// A worker's life is one state: idle, running, draining, then stopped or failed. Its two loops
// (folding runs, claiming tasks) live and die together: when one meets an error it cannot go on
// from, the other stops too, the worker drains, and only then does `run()` reject.

const db = pgStoreForFile();

afterEach(() => {
  vi.restoreAllMocks();
});

const one = graph('lifecycle-one', { state: z.object({ done: z.boolean().default(false) }) })
  .node('only', () => ({ done: true }))
  .edge('only', END)
  .entry('only')
  .compile();

describePg('a worker whose loop fails', () => {
  it('stops the other loop, drains, and only then rejects: no claim comes after run() settles', async () => {
    const store = db.store;
    const broken = new Error('the wait for runs broke');
    const waitForWork = store.waitForWork.bind(store);
    vi.spyOn(store, 'waitForWork').mockImplementation((ms, signal, since, kind) =>
      kind === 'runs' ? Promise.reject(broken) : waitForWork(ms, signal, since, kind),
    );
    const claims = vi.spyOn(store, 'claimTasks');
    const worker = new Worker(store, [one], { pollMs: 50 });
    expect(worker.status).toEqual({ status: 'idle' });

    const stop = new AbortController();
    const running = worker.run(stop.signal);
    expect(worker.status).toEqual({ status: 'running' });
    await expect(running).rejects.toBe(broken);

    expect(worker.status).toEqual({ status: 'failed', error: broken });
    const after = claims.mock.calls.length;
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(claims.mock.calls.length).toBe(after);
    expect(await store.listWorkers()).toEqual([]);
  });

  it('runs once: a second run() of the same worker is refused', async () => {
    const worker = new Worker(db.store, [one], { pollMs: 50 });
    const stop = new AbortController();
    stop.abort();
    await worker.run(stop.signal);
    expect(worker.status).toEqual({ status: 'stopped' });
    await expect(worker.run(stop.signal)).rejects.toMatchObject({ code: 'OPTIONS_INVALID' });
  });
});
