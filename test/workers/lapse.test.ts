import { afterEach, expect, it, vi } from 'vitest';
import { z } from 'zod';
import {
  append,
  END,
  enqueue,
  graph,
  inspect,
  WaymarkError,
  Worker,
  type WorkerEvent,
} from '../../src/index.js';
import { describePg, pgStoreForFile } from '../store/fixtures/postgres.js';
import { until } from './fixtures/until.js';

// A worker that cannot renew its leases in time stops the work they cover before they can
// expire: from then on another worker may take that work over. The failure a stopped body ends
// in is the stop's doing, not the node's, and is not recorded (a body deaf to its signal that
// completes anyway is offered to the fence, as the zombie test shows). Here the database takes claims and
// commits but refuses every renewal, or never answers one (a connection dead without a word),
// as a database out of the worker's reach would. The lease is left to expire (or given back,
// for a run the worker drove itself), and the next claim runs the activation again at the next
// epoch. Renewals that never came back keep none of the later ones from being made.

const db = pgStoreForFile();

afterEach(() => {
  vi.restoreAllMocks();
});

const State = z.object({ log: z.array(z.string()).default([]) });
const leaseMs = 1_500;

describePg('a worker that cannot renew its leases in time', () => {
  it.each([
    ['a task', 'refused', false],
    ['a run it drives itself', 'refused', true],
    ['a task', 'never answered', false],
    ['a run it drives itself', 'never answered', true],
  ] as const)(
    'stops %s before its lease can expire (renewals %s), records nothing of it, and the next claim runs it again',
    {
      timeout: 30_000,
    },
    async (what, how, inline) => {
      const name = `lapse-${inline ? 'held' : 'task'}-${how === 'refused' ? 'refused' : 'hung'}`;
      let bodies = 0;
      let stoppedAt: number | undefined;
      const g = graph(name, { state: State, reducers: { log: append } })
        .node('work', async (_s, ctx) => {
          bodies++;
          if (bodies > 1) return { log: ['ran again'] };
          // A body that heeds its signal, as a fetch given it does: stopped, it fails.
          await new Promise<void>((_resolve, reject) =>
            ctx.signal.addEventListener('abort', () => {
              stoppedAt = Date.now();
              reject(ctx.signal.reason);
            }),
          );
          return { log: ['never reached'] };
        })
        .edge('work', END)
        .entry('work')
        .compile();

      // A renewal the database refuses, or one whose reply never comes (a partition).
      const refused = <T>(): Promise<T> =>
        how === 'never answered'
          ? new Promise<T>(() => {})
          : Promise.reject(
              new WaymarkError('STORE_UNAVAILABLE', 'the database is out of reach (test)', {
                retryable: true,
              }),
            );
      const store = db.store;
      const register = store.registerWorker.bind(store);
      let registrations = 0;
      vi.spyOn(store, 'registerWorker').mockImplementation((w) =>
        registrations++ === 0 ? register(w) : refused(),
      );
      vi.spyOn(store, 'renewTasks').mockImplementation(refused);
      vi.spyOn(store, 'renew').mockImplementation(refused);
      // When the lease of the work expires by the database's clock (this machine's), as claimed:
      // no renewal ever extends it.
      let expiresAt = Number.POSITIVE_INFINITY;
      const claimTasks = store.claimTasks.bind(store);
      vi.spyOn(store, 'claimTasks').mockImplementation(async (claim) => {
        const tasks = await claimTasks(claim);
        for (const t of tasks) if (t.runId === name) expiresAt = Math.min(expiresAt, t.expiresAt);
        return tasks;
      });
      const claimRuns = store.claimAndLoadRuns.bind(store);
      vi.spyOn(store, 'claimAndLoadRuns').mockImplementation(async (claim) => {
        const runs = await claimRuns(claim);
        for (const r of runs)
          if (inline && r.lease.runId === name) expiresAt = Math.min(expiresAt, r.lease.expiresAt);
        return runs;
      });

      const events: WorkerEvent[] = [];
      const stop = new AbortController();
      const working = new Worker(store, [g], {
        leaseMs,
        pollMs: 50,
        inline,
        onEvent: (e) => events.push(e),
      }).run(stop.signal);
      try {
        await enqueue(store, g, {}, { runId: name });
        await until(`the body of ${what} is stopped`, async () => stoppedAt);
        // Stopped a third of a lease ahead of its expiry (renewals are tried every third).
        expect(stoppedAt!).toBeLessThan(expiresAt);
        expect(events).toContainEqual({
          type: 'lost',
          runId: name,
          activation: expect.any(String),
        });
        vi.restoreAllMocks();
        const registered = (await store.listWorkers())[0]!.expiresAt;

        const run = await until('the run ends', async () => {
          const r = await store.getRun(name);
          return r?.status === 'running' ? undefined : r;
        });
        expect(run.status).toBe('succeeded');
        expect(bodies).toBe(2);
        const view = await inspect(store, g, name);
        expect(view.snapshot.state.log).toEqual(['ran again']);
        // One attempt recorded, by the claim after the lapsed one.
        expect(view.trace.entries.filter((e) => e.node === 'work')).toHaveLength(1);
        // And the worker renews again, whatever became of the renewals that never came back.
        await until('a renewal lands', async () =>
          (await store.listWorkers())[0]!.expiresAt > registered ? true : undefined,
        );
      } finally {
        stop.abort();
        await working;
      }
    },
  );
});
