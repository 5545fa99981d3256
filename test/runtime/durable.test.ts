import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  append,
  END,
  type GraphBuilder,
  graph,
  isWaymarkError,
  loadTrace,
  MemoryStore,
  resume,
  run,
  type Store,
  WaymarkError,
} from '../../src/index.js';
import { manualClock } from '../support/clock.js';
import { dyingAt, stores } from '../support/stores.js';

const Pipeline = z.object({ log: z.array(z.string()).default([]) });

/** A 7-step pipeline s1..s7 whose step 5 fails while `broken.value` is true. */
function sevenSteps(broken: { value: boolean }) {
  const calls: Record<string, number> = {};
  let b: GraphBuilder<z.output<typeof Pipeline>, string, z.input<typeof Pipeline>> = graph(
    'seven',
    {
      state: Pipeline,
      reducers: { log: append },
    },
  );
  for (let i = 1; i <= 7; i++) {
    const name = `s${i}`;
    b = b.node(
      name,
      () => {
        calls[name] = (calls[name] ?? 0) + 1;
        if (name === 's5' && broken.value) throw new Error('the upstream API is down');
        return { log: [name] };
      },
      { retry: { attempts: 3 } },
    );
  }
  for (let i = 1; i < 7; i++) b = b.edge(`s${i}`, `s${i + 1}`);
  return { graph: b.edge('s7', END).entry('s1').compile(), calls };
}

describe.each(stores)('with the %s store', (_name, makeStore) => {
  describe('a store that cannot be reached for a moment', () => {
    /** A store whose commit at `seq` fails `times` times with STORE_UNAVAILABLE first. */
    const flaky = (store: Store, seq: number, times: number, retryable: boolean): Store =>
      new Proxy(store, {
        get(target, key, receiver) {
          if (key === 'commit') {
            return async (runId: string, commit: Parameters<Store['commit']>[1]) => {
              if (commit.seq === seq && times-- > 0)
                throw new WaymarkError('STORE_UNAVAILABLE', 'database is locked', { retryable });
              return target.commit(runId, commit);
            };
          }
          const value = Reflect.get(target, key, receiver);
          return typeof value === 'function' ? value.bind(target) : value;
        },
      });

    it('takes a step again when the store says its failure is retryable (a lock held past the busy timeout)', async () => {
      const store = makeStore();
      const clock = manualClock();
      const { graph: g, calls } = sevenSteps({ value: false });
      const result = await run(g, {}, { store: flaky(store, 3, 2, true), clock, runId: 'r' });
      expect(result.status).toBe('succeeded');
      expect(Object.values(calls)).toEqual([1, 1, 1, 1, 1, 1, 1]);
      expect(clock.sleeps).toEqual([50, 100]);
      expect((await store.events('r')).map((e) => e.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    });

    it('stops at a failure the store does not call retryable (a full disk), with what was recorded kept', async () => {
      const store = makeStore();
      const { graph: g } = sevenSteps({ value: false });
      await expect(
        run(g, {}, { store: flaky(store, 3, 1, false), runId: 'r' }),
      ).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' });
      expect((await store.getRun('r'))?.seq).toBe(2);
    });
  });

  describe('durable runs with a store', () => {
    it('resumes a failed 7-step pipeline at step 5: steps 1-4 are read back, only step 5 on runs', async () => {
      const store = makeStore();
      const broken = { value: true };
      const { graph: g, calls } = sevenSteps(broken);

      const first = await run(g, {}, { store, clock: manualClock() });
      expect(first.status).toBe('failed');
      expect(calls).toEqual({ s1: 1, s2: 1, s3: 1, s4: 1, s5: 3 });

      broken.value = false;
      const second = await resume(store, g, first.runId, { clock: manualClock() });

      expect(second.status).toBe('succeeded');
      expect(calls).toEqual({ s1: 1, s2: 1, s3: 1, s4: 1, s5: 4, s6: 1, s7: 1 });
      expect(second.state.log).toEqual(['s1', 's2', 's3', 's4', 's5', 's6', 's7']);
      expect(second.trace.path).toEqual(['s5', 's6', 's7']); // what this resume ran
      const history = await loadTrace(store, first.runId);
      expect(history.path).toEqual(['s1', 's2', 's3', 's4', 's5', 's6', 's7']);
      expect(history.entries.filter((e) => e.node === 's5').map((e) => e.status)).toEqual([
        'failed',
        'failed',
        'failed',
        'succeeded',
      ]);
      expect((await store.getRun(first.runId))?.status).toBe('succeeded');
    });

    it('resumes a run whose process died mid-flight; no completed activation runs again', async () => {
      const store = makeStore();
      const { graph: g, calls } = sevenSteps({ value: false });
      // Sequence 1 is the start; 2..4 complete s1..s3; the commit of s4's completion never lands.
      const crashed = await run(g, {}, { store: dyingAt(store, 5), runId: 'r1' }).catch(
        (e: unknown) => e,
      );
      expect(String(crashed)).toContain('the process died');
      expect((await store.getRun('r1'))?.status).toBe('running');

      const result = await resume(store, g, 'r1');

      expect(result.status).toBe('succeeded');
      // s4 ran, but its completion was never recorded: it is the one activation that runs again.
      expect(calls).toEqual({ s1: 1, s2: 1, s3: 1, s4: 2, s5: 1, s6: 1, s7: 1 });
      expect(result.state.log).toEqual(['s1', 's2', 's3', 's4', 's5', 's6', 's7']);
    });

    it('loads from the latest snapshot plus at most K events, and ends in the same state as a run in memory', async () => {
      const Counter = z.object({ i: z.number(), seen: z.array(z.number()).default([]) });
      const g = graph('loop', { state: Counter, reducers: { seen: append } })
        .node('tick', (s) => ({ i: s.i + 1, seen: [s.i] }), { visits: 50 })
        .route('tick', (s) => (s.i >= 40 ? END : 'tick'), ['tick', END])
        .entry('tick')
        .compile();
      const store = makeStore();
      const inMemory = await run(g, { i: 0 });
      const crashed = await run(
        g,
        { i: 0 },
        { store: dyingAt(store, 30), runId: 'r', snapshotEvery: 7 },
      ).catch(() => 'died');
      expect(crashed).toBe('died');

      const loaded = await store.loadRun('r');
      expect(loaded?.snapshot.seq).toBe(28);
      expect(loaded?.events.map((e) => e.seq)).toEqual([29]);

      const resumed = await resume(store, g, 'r');
      expect(resumed.state).toEqual(inMemory.state);
      const after = await store.loadRun('r');
      expect(after?.events).toEqual([]); // a stopped run ends on a snapshot
    });

    it('stores bytes that follow the size of the updates, not the size of the state', async () => {
      const Doc = z.object({ chunks: z.array(z.string()).default([]), n: z.number().default(0) });
      const chunk = 'x'.repeat(1_000);
      const g = graph('grow', { state: Doc, reducers: { chunks: append } })
        .node('add', (s) => ({ chunks: [chunk], n: s.n + 1 }), { visits: 1_000 })
        .route('add', (s) => (s.n >= 1_000 ? END : 'add'), ['add', END])
        .entry('add')
        .compile();
      const store = makeStore();
      const result = await run(g, {}, { store });
      expect(JSON.stringify(result.state).length).toBeGreaterThan(1_000_000);

      const usage = await store.usage(result.runId);
      const updates = 1_000 * JSON.stringify({ chunks: [chunk], n: 1000 }).length;
      expect(usage.eventBytes).toBeLessThan(3 * updates);
      expect(usage.eventBytes + usage.snapshotBytes).toBeLessThan(
        3 * (updates + usage.snapshotBytes),
      );
      // What LangGraph's saver would store: the whole state at every step, about 500 MB here.
      expect(usage.eventBytes + usage.snapshotBytes).toBeLessThan(20_000_000);
    });

    it('resumes a fan-out interrupted mid-flight without running finished branches again', async () => {
      const Files = z.object({ files: z.array(z.string()), done: z.array(z.string()).default([]) });
      const ran: string[] = [];
      const g = graph('audit', { state: Files, reducers: { done: append } })
        .node('list', () => ({}))
        .node(
          'audit',
          (_s, ctx) => {
            ran.push(String(ctx.item));
            return { done: [String(ctx.item)] };
          },
          { writes: ['done'] },
        )
        .node('collect', () => ({}))
        .map('list', { over: 'files', branch: 'audit', join: 'collect', concurrency: 1 })
        .edge('audit', 'collect')
        .edge('collect', END)
        .entry('list')
        .compile();
      const store = makeStore();
      // 1 start, 2 list, 3 audit a, 4 audit b: dies before b's completion is recorded.
      await run(g, { files: ['a', 'b', 'c'] }, { store: dyingAt(store, 4), runId: 'r' }).catch(
        () => undefined,
      );

      const result = await resume(store, g, 'r');

      expect(result.status).toBe('succeeded');
      expect(result.state.done).toEqual(['a', 'b', 'c']);
      expect(ran).toEqual(['a', 'b', 'b', 'c']);
    });
  });

  describe('what resume refuses, changing nothing', () => {
    const Simple = z.object({ n: z.number().default(0) });
    const failing = (name = 'g', extra = false) => {
      let b = graph(name, { state: Simple })
        .node('a', () => ({ n: 1 }))
        .node('b', () => {
          throw new Error('no');
        });
      if (extra) b = b.node('c', () => undefined, { terminal: true });
      return b.edge('a', 'b').edge('b', END).entry('a').compile();
    };

    it('refuses a run it does not have, one that was cancelled, and one with nothing left to run', async () => {
      const store = makeStore();
      const code = (p: Promise<unknown>) =>
        p.then(
          () => 'resolved',
          (e: unknown) => (isWaymarkError(e) ? e.code : String(e)),
        );
      expect(await code(resume(store, failing(), 'nope'))).toBe('RUN_NOT_FOUND');

      const cancelled = await run(failing(), {}, { store, signal: AbortSignal.abort() });
      expect(await code(resume(store, failing(), cancelled.runId))).toBe('RUN_NOT_RESUMABLE');

      // A map over a field that holds no list: its node completed, and nothing is pending.
      const Items = z.object({ items: z.array(z.string()).nullable().default(null) });
      // A nullable field is not a list to the types; JavaScript callers get here the same way.
      const mapped = graph('mapped', { state: Items })
        .node('split', () => ({}))
        .node('each', () => ({}), { writes: [] })
        .node('merge', () => ({}), { terminal: true })
        .map('split', { over: 'items' as never, branch: 'each', join: 'merge' })
        .edge('each', 'merge')
        .entry('split')
        .compile();
      const stuck = await run(mapped, {}, { store });
      expect(stuck.status === 'failed' && stuck.error.code).toBe('MAP_NOT_LIST');
      expect(await code(resume(store, mapped, stuck.runId))).toBe('RUN_NOT_RESUMABLE');
    });

    it('returns a succeeded run as it is, running nothing', async () => {
      const store = makeStore();
      let calls = 0;
      const g = graph('ok', { state: Simple })
        .node('a', () => {
          calls++;
          return { n: 5 };
        })
        .edge('a', END)
        .entry('a')
        .compile();
      const first = await run(g, {}, { store });
      const again = await resume(store, g, first.runId);
      expect(again.status).toBe('succeeded');
      expect(again.state).toEqual({ n: 5 });
      expect(calls).toBe(1);
    });

    it('refuses a graph of another name, or one that lost the node the run waits on', async () => {
      const store = makeStore();
      const first = await run(failing(), {}, { store });
      const seq = (await store.getRun(first.runId))?.seq;
      const other = failing('other');
      await expect(resume(store, other, first.runId)).rejects.toMatchObject({
        code: 'GRAPH_MISMATCH',
      });
      const withoutB = graph('g', { state: Simple })
        .node('a', () => ({ n: 1 }))
        .edge('a', END)
        .entry('a')
        .compile();
      await expect(resume(store, withoutB, first.runId)).rejects.toMatchObject({
        code: 'GRAPH_MISMATCH',
      });
      expect((await store.getRun(first.runId))?.seq).toBe(seq);
    });

    it('accepts a changed graph for a run stopped on a snapshot, when its pending node still exists', async () => {
      const store = makeStore();
      const first = await run(failing(), {}, { store });
      const fixed = graph('g', { state: Simple })
        .node('a', () => ({ n: 1 }))
        .node('b', (s) => ({ n: s.n + 1 }))
        .node('c', () => undefined, { terminal: true })
        .edge('a', 'b')
        .edge('b', 'c')
        .entry('a')
        .compile();
      const result = await resume(store, fixed, first.runId);
      expect(result.status).toBe('succeeded');
      const history = await loadTrace(store, first.runId);
      expect(history.path).toEqual(['a', 'b', 'c']);
      expect(history.entries.map((e) => `${e.activation}#${e.attempt}`)).toEqual([
        'a:1#1',
        'b:1#1',
        'b:1#1',
        'c:1#1',
      ]);
    });

    it('refuses a changed graph for a run interrupted mid-flight: its events would replay differently', async () => {
      const store = makeStore();
      const { graph: g } = sevenSteps({ value: false });
      await run(g, {}, { store: dyingAt(store, 4), runId: 'r' }).catch(() => undefined);
      const { graph: changed } = sevenSteps({ value: false });
      const edited = graph('seven', { state: Pipeline, reducers: { log: append } })
        .node('s1', () => ({ log: ['s1'] }))
        .edge('s1', END)
        .entry('s1')
        .compile();
      expect(changed.hash).toBe(g.hash);
      await expect(resume(store, edited, 'r')).rejects.toMatchObject({ code: 'GRAPH_MISMATCH' });
      expect((await store.getRun('r'))?.seq).toBe(3);
    });

    it('migrates an older checkpoint through the declared migrations, and refuses a newer one', async () => {
      const store = makeStore();
      const V1 = z.object({ name: z.string(), tries: z.number().default(0) });
      let fail = true;
      const v1 = graph('people', { state: V1 })
        .node('greet', () => {
          if (fail) throw new Error('not yet');
          return {};
        })
        .edge('greet', END)
        .entry('greet')
        .compile();
      const first = await run(v1, { name: 'Ada Lovelace' }, { store });
      expect(first.status).toBe('failed');

      const V2 = z.object({ first: z.string(), last: z.string(), tries: z.number().default(0) });
      fail = false;
      const v2 = graph('people', {
        state: V2,
        stateVersion: 2,
        migrations: {
          1: (old) => {
            const [first = '', last = ''] = String(old.name).split(' ');
            return { first, last, tries: old.tries };
          },
        },
      })
        .node('greet', (s) => ({ tries: s.tries + 1 }))
        .edge('greet', END)
        .entry('greet')
        .compile();
      const migrated = await resume(store, v2, first.runId);
      expect(migrated.status).toBe('succeeded');
      expect(migrated.state).toEqual({ first: 'Ada', last: 'Lovelace', tries: 1 });

      // v1 code meeting the v2 checkpoint: refused.
      const other = await run(v2, { first: 'a', last: 'b' }, { store });
      const v1again = graph('people', { state: V1 })
        .node('greet', () => ({}))
        .edge('greet', END)
        .entry('greet')
        .compile();
      await expect(resume(store, v1again, other.runId)).rejects.toMatchObject({
        code: 'STATE_VERSION_UNKNOWN',
      });
    });

    it('fails the load of a corrupted run with STORE_CORRUPT and leaves other runs usable', async () => {
      const store = makeStore();
      const good = await run(failing(), {}, { store });
      const bad = await run(failing(), {}, { store });
      const corrupted = new Proxy(store, {
        get(target, key, receiver) {
          if (key === 'loadRun') {
            return async (id: string) => {
              const loaded = await target.loadRun(id);
              return id === bad.runId && loaded
                ? { ...loaded, snapshot: { seq: 0, data: '{"status":' } }
                : loaded;
            };
          }
          const value = Reflect.get(target, key, receiver);
          return typeof value === 'function' ? value.bind(target) : value;
        },
      });
      await expect(resume(corrupted, failing(), bad.runId)).rejects.toMatchObject({
        code: 'STORE_CORRUPT',
      });
      const ok = await resume(corrupted, failing(), good.runId);
      expect(ok.status).toBe('failed'); // it ran again (b still throws), which is the point: it loaded
    });

    it('lets only one of two concurrent resumes of the same run drive it: the other is refused with RUN_OWNED', async () => {
      const store = makeStore();
      const first = await run(failing(), {}, { store });
      const outcomes = await Promise.allSettled([
        resume(store, failing(), first.runId),
        resume(store, failing(), first.runId),
      ]);
      const codes = outcomes.map((o) =>
        o.status === 'rejected' ? (o.reason as { code: string }).code : 'ok',
      );
      expect(codes.sort()).toEqual(['RUN_OWNED', 'ok']);
    });
  });

  describe('a run whose process died before its start was recorded', () => {
    it('is started by resume, its entry running once', async () => {
      const store = makeStore();
      let calls = 0;
      const g = graph('g', { state: z.object({ n: z.number().default(0) }) })
        .node('a', () => {
          calls++;
          return { n: 1 };
        })
        .edge('a', END)
        .entry('a')
        .compile();
      await run(g, {}, { store: dyingAt(store, 1), runId: 'r' }).catch(() => undefined);
      expect((await store.getRun('r'))?.seq).toBe(0);
      const result = await resume(store, g, 'r');
      expect(result.status).toBe('succeeded');
      expect(calls).toBe(1);
    });
  });
});

describe('the stored trace of a cancelled run', () => {
  it('includes the attempts that were in flight when it was cancelled', async () => {
    const store = new MemoryStore();
    const controller = new AbortController();
    const g = graph('slow', { state: z.object({ n: z.number().default(0) }) })
      .node(
        'wait',
        (_s, ctx) =>
          new Promise<undefined>((resolve) => {
            ctx.signal.addEventListener('abort', () => resolve(undefined));
            setTimeout(() => controller.abort('stop'), 5);
          }),
      )
      .edge('wait', END)
      .entry('wait')
      .compile();
    const result = await run(g, {}, { store, signal: controller.signal });
    expect(result.status).toBe('cancelled');
    const stored = await loadTrace(store, result.runId);
    expect(stored.entries.map((e) => [e.node, e.status])).toEqual([['wait', 'cancelled']]);
  });
});
