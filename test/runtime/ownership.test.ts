import { hostname } from 'node:os';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  END,
  type GraphBuilder,
  graph,
  isWaymarkError,
  MemoryStore,
  resume,
  run,
  type Store,
} from '../../src/index.js';
import { SqliteStore } from '../../src/sqlite.js';

// One owner per run, in every store: a lease names the owner, an epoch and an expiry by the
// store's clock; a live lease refuses a second driver; an expired one is taken over (epoch + 1)
// and the old owner's late commits are refused.

const State = z.object({ n: z.number().default(0) });

/** A store whose clock the test moves, as every store's lease expiry reads it. */
const clocked: [string, (now: () => number) => Store][] = [
  ['memory', (now) => new MemoryStore({ now })],
  ['sqlite', (now) => new SqliteStore({ path: ':memory:', now })],
];

const code = (p: Promise<unknown>) =>
  p.then(
    () => 'resolved',
    (e: unknown) => (isWaymarkError(e) ? e.code : String(e)),
  );

describe.each(clocked)('one owner per run, with the %s store', (_name, makeStore) => {
  /** fetch (which waits for the test to let it go) -> done. */
  const gated = () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let begin!: () => void;
    const begun = new Promise<void>((resolve) => {
      begin = resolve;
    });
    const calls = { fetch: 0, done: 0 };
    let signal: AbortSignal | undefined;
    const g = graph('gated', { state: State })
      .node('fetch', async (_s, ctx) => {
        calls.fetch++;
        signal = ctx.signal;
        begin();
        await gate;
        return { n: 1 };
      })
      .node('done', () => {
        calls.done++;
        return {};
      })
      .edge('fetch', 'done')
      .edge('done', END)
      .entry('fetch')
      .compile();
    return { g, calls, begun, release: () => release(), signal: () => signal };
  };

  it('refuses a second driver of a live run with RUN_OWNED, naming the owner and when its lease expires', async () => {
    const now = 10_000;
    const store = makeStore(() => now);
    const { g, calls, begun, release } = gated();
    const running = run(g, {}, { store, runId: 'r' });
    await begun;

    const refused = await resume(store, g, 'r').catch((e: unknown) => e);

    expect(refused).toMatchObject({
      code: 'RUN_OWNED',
      details: {
        runId: 'r',
        host: hostname(),
        pid: process.pid,
        epoch: 1,
        expiresAt: 10_000 + 30_000,
      },
      message: expect.stringMatching(
        /is being driven by .* on .* \(pid \d+\); its lease expires in 30 s/,
      ),
    });
    expect((await store.getRun('r'))?.lease).toMatchObject({ live: true, epoch: 1 });
    release();
    expect((await running).status).toBe('succeeded');
    expect(calls).toEqual({ fetch: 1, done: 1 });
    // A run that stopped gave its lease up: anyone may resume it at once.
    expect((await store.getRun('r'))?.lease).toMatchObject({ live: false, expiresAt: 0 });
  });

  it("takes a run over once its lease expired by the store's clock, and the old owner's late commits are refused", async () => {
    let now = 10_000;
    const store = makeStore(() => now);
    const { g, calls, begun, release, signal } = gated();
    const first = run(g, {}, { store, runId: 'r' });
    await begun;

    now += 30_001; // the store's clock passes the lease's expiry
    const second = gated();
    const takeover = resume(store, second.g, 'r');
    await second.begun;
    expect((await store.getRun('r'))?.lease).toMatchObject({ epoch: 2, live: true });

    release(); // the old owner's fetch returns, and its commit is refused
    expect(await code(first)).toBe('LEASE_LOST');
    expect(signal()?.aborted).toBe(true);
    second.release();
    const result = await takeover;
    expect(result.status).toBe('succeeded');
    expect(calls.done + second.calls.done).toBe(1);
  });

  it('takes a run over at once when its owner is provably dead: same host, no such process', async () => {
    const store = makeStore(Date.now);
    const g = graph('one', { state: State })
      .node('inc', (s) => ({ n: s.n + 1 }))
      .edge('inc', END)
      .entry('inc')
      .compile();
    await store.createRun({
      id: 'r',
      graph: 'one',
      graphHash: g.hash,
      graphVersion: 1,
      stateVersion: 1,
      createdAt: 1,
      status: 'running',
      snapshot: JSON.stringify({
        status: 'running',
        runId: 'r',
        graph: { name: 'one', hash: g.hash, version: 1, stateVersion: 1 },
        state: { n: 0 },
        pending: [],
        visits: {},
        steps: 0,
        errors: [],
        fanOuts: {},
        limits: { maxSteps: 10 },
        spent: { inputTokens: 0, outputTokens: 0, costUsd: 0 },
        quarantine: [],
      }),
    });
    // A process of this host that no longer exists (pid 2^22 - 1 is past Linux's pid_max default).
    await store.acquire('r', { owner: 'dead', host: hostname(), pid: 4_194_303, leaseMs: 60_000 });

    const result = await resume(store, g, 'r');

    expect(result.status).toBe('succeeded');
    expect((await store.getRun('r'))?.lease).toMatchObject({ epoch: 2 });
  });

  it('waits out an owner on another host: RUN_OWNED until its lease expires', async () => {
    let now = 10_000;
    const store = makeStore(() => now);
    const g = graph('one', { state: State })
      .node('inc', async () => {
        throw new Error('not yet');
      })
      .edge('inc', END)
      .entry('inc')
      .compile();
    await run(g, {}, { store, runId: 'r' });
    await store.acquire('r', { owner: 'other', host: 'elsewhere', pid: 1, leaseMs: 5_000 });

    expect(await code(resume(store, g, 'r'))).toBe('RUN_OWNED');
    now += 5_001;
    expect(await code(resume(store, g, 'r'))).toBe('resolved');
  });

  it('renews its lease on a timer while it works, not once per step', async () => {
    const store = makeStore(Date.now);
    let renewals = 0;
    const counting = new Proxy(store, {
      get(target, key, receiver) {
        if (key === 'renew') {
          return (...args: Parameters<Store['renew']>) => {
            renewals++;
            return target.renew(...args);
          };
        }
        const value = Reflect.get(target, key, receiver);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    let b: GraphBuilder<z.output<typeof State>, string, z.input<typeof State>> = graph('chain', {
      state: State,
    }).node('n0', (s) => ({ n: s.n + 1 }));
    for (let i = 1; i < 200; i++)
      b = b.node(`n${i}`, (s) => ({ n: s.n + 1 })).edge(`n${i - 1}`, `n${i}`);
    const chain = b.edge('n199', END).entry('n0').compile();

    const fast = await run(chain, {}, { store: counting });
    expect(fast.steps).toBe(200);
    expect(renewals).toBe(0);

    // A slow node outlives three renewal periods of a 60 ms lease, and keeps its run.
    const slow = graph('slow', { state: State })
      .node(
        'wait',
        () => new Promise<{ n: number }>((resolve) => setTimeout(() => resolve({ n: 1 }), 150)),
      )
      .edge('wait', END)
      .entry('wait')
      .compile();
    const running = run(slow, {}, { store: counting, runId: 'slow', leaseMs: 60 });
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await code(resume(counting, slow, 'slow'))).toBe('RUN_OWNED');
    expect((await running).status).toBe('succeeded');
    expect(renewals).toBeGreaterThanOrEqual(2);
  });
});
