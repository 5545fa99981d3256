import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  END,
  graph,
  isWaymarkError,
  MemoryStore,
  resume,
  run,
  type Store,
  WaymarkError,
} from '../../src/index.js';

// One owner per run, on the in-process host too: a driver that cannot renew its lease stops
// its own work a third of a lease before the lease could expire, as a worker does, so the
// process that takes the run over never runs a node body at the same time as this one.

const State = z.object({ n: z.number().default(0) });

/** A store whose lease renewals fail, one way or another, once `broken` is set. */
function renewals(store: Store, how: 'refused' | 'never answered') {
  const state = { broken: false };
  const proxy = new Proxy(store, {
    get(target, key, receiver) {
      if (key === 'renew') {
        return (...args: Parameters<Store['renew']>) => {
          if (!state.broken) return target.renew(...args);
          if (how === 'never answered') return new Promise(() => {});
          return Promise.reject(
            new WaymarkError('STORE_UNAVAILABLE', 'the store cannot be reached', {
              retryable: true,
            }),
          );
        };
      }
      const value = Reflect.get(target, key, receiver);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return { store: proxy, state };
}

const code = (p: Promise<unknown>) =>
  p.then(
    () => 'resolved',
    (e: unknown) => (isWaymarkError(e) ? e.code : String(e)),
  );

describe.each(['refused', 'never answered'] as const)(
  'a run driven in process whose lease renewals are %s',
  (how) => {
    it('stops its node body before the lease can expire, and the run taken over runs it once more, never at the same time', async () => {
      const store = new MemoryStore();
      const faulty = renewals(store, how);
      const bodies: { start: number; end?: number; aborted?: number }[] = [];
      const g = graph('slow', { state: State })
        .node('work', async (s, ctx) => {
          const body: (typeof bodies)[number] = { start: Date.now() };
          bodies.push(body);
          faulty.state.broken = true;
          await new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, 2_500);
            ctx.signal.addEventListener('abort', () => {
              body.aborted = Date.now();
              clearTimeout(timer);
              resolve();
            });
          });
          body.end = Date.now();
          return { n: s.n + 1 };
        })
        .node('done', () => ({}))
        .edge('work', 'done')
        .edge('done', END)
        .entry('work')
        .compile();

      // A third of a lease (500 ms) of margin: room for a busy machine's late timers.
      const first = run(g, {}, { store: faulty.store, runId: 'r', leaseMs: 1_500 });
      while (bodies.length === 0) await new Promise((r) => setTimeout(r, 5));
      // The lease as its claim set it: no renewal of it ever lands.
      const expiresAt = (await store.getRun('r'))!.lease!.expiresAt;

      expect(await code(first)).toBe('LEASE_LOST');
      expect(bodies[0]!.aborted).toBeDefined();
      expect(bodies[0]!.aborted!).toBeLessThan(expiresAt);

      // Another driver takes the run over once it may, and runs the node again, alone.
      let second: Awaited<ReturnType<typeof resume>> | undefined;
      while (second === undefined) {
        try {
          second = await resume(store, g, 'r', { leaseMs: 30_000 });
        } catch (error) {
          if (!isWaymarkError(error) || error.code !== 'RUN_OWNED') throw error;
          await new Promise((r) => setTimeout(r, 20));
        }
      }
      expect(second.status).toBe('succeeded');
      expect(bodies).toHaveLength(2);
      expect(bodies[1]!.start).toBeGreaterThanOrEqual(bodies[0]!.end!);
      const completed = (await store.events('r')).filter(
        (e) => e.event.includes('"completed"') && e.event.includes('work'),
      );
      expect(completed).toHaveLength(1);
    });
  },
);
