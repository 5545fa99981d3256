import type { ErrorCode } from '../error/codes.js';
import type { Commit, MemoRecord, NewRun, Store, WaitRecord } from '../store/store.js';
import { storeFormatVersion } from '../store/store.js';

// The behaviour every Store shares, as one suite a store's own tests run: the memory, SQLite and
// PostgreSQL stores here, and a third party's. It takes the test framework's functions instead
// of importing one, so it runs under vitest or jest alike.

/** What of a test framework the suite uses: vitest's or jest's globals fit. */
export interface TestApi {
  readonly describe: (name: string, body: () => void) => void;
  readonly it: (name: string, body: () => Promise<void>) => void;
  readonly beforeEach: (body: () => Promise<void>) => void;
  readonly afterEach: (body: () => Promise<void>) => void;
  readonly expect: Expect;
}

/** The assertions the suite makes, as vitest's and jest's `expect` both provide them. */
export interface Expect {
  (actual: unknown): Assertion;
  any(type: unknown): unknown;
}

interface Assertion {
  toBe(expected: unknown): void;
  toEqual(expected: unknown): void;
  toMatchObject(expected: object): void;
  toBeUndefined(): void;
  toBeNull(): void;
  toContain(item: unknown): void;
  toHaveLength(length: number): void;
  readonly not: Assertion;
  readonly rejects: { toMatchObject(expected: object): Promise<void> };
}

/** A test the store does not pass, named, with why: Hono's reasoned skips. */
export interface Skip {
  /** The test's name, as the suite gives it (`it`'s first argument). */
  readonly test: string;
  readonly reason: string;
}

/** Options of {@link storeConformance}. */
export interface ConformanceOptions {
  /** Tests this store skips, each with its reason; a skip naming no test of the suite fails. */
  readonly skip?: readonly Skip[];
}

/** A fresh, empty store and how to dispose of it. */
export interface StoreFixture {
  readonly store: Store;
  cleanup(): Promise<void>;
}

/**
 * A run as `createRun` takes it; `overrides` change any field.
 *
 * @example
 * await store.createRun(sampleRun('r1', { labels: '{"a":"b"}' }));
 */
export function sampleRun(id: string, overrides: Partial<NewRun> = {}): NewRun {
  return {
    id,
    graph: 'claims',
    graphHash: 'hash-1',
    graphVersion: 1,
    stateVersion: 1,
    createdAt: 1_000,
    status: 'running',
    snapshot: JSON.stringify({ at: 0 }),
    ...overrides,
  };
}

/**
 * Step `seq` of a run: a small event, no snapshot unless `overrides` give one.
 *
 * @example
 * await store.commit('r1', sampleCommit(1));
 */
export function sampleCommit(seq: number, overrides: Partial<Commit> = {}): Commit {
  return {
    seq,
    at: 1_000 + seq,
    event: JSON.stringify({ type: 'completed', seq }),
    trace: null,
    status: 'running',
    error: null,
    snapshot: null,
    ...overrides,
  };
}

/**
 * Commits steps `from`..`to` in order; a snapshot at every seq listed in `snapshotsAt`.
 *
 * @example
 * await commitSteps(store, 'r1', 1, 7, [3, 5]);
 */
export async function commitSteps(
  store: Store,
  runId: string,
  from: number,
  to: number,
  snapshotsAt: readonly number[] = [],
): Promise<void> {
  for (let seq = from; seq <= to; seq++) {
    const snapshot = snapshotsAt.includes(seq) ? JSON.stringify({ at: seq }) : null;
    await store.commit(runId, sampleCommit(seq, { snapshot }));
  }
}

let expect: Expect;
const newRun = sampleRun;
const step = sampleCommit;

async function rejectsWith(promise: Promise<unknown>, code: ErrorCode): Promise<void> {
  await expect(promise).rejects.toMatchObject({ code });
}

function wait(runId: string, requestId: string, openedAt = 2_000): WaitRecord {
  return {
    runId,
    requestId,
    node: 'approve',
    activation: `approve:${requestId}`,
    request: JSON.stringify({ prompt: 'publish?' }),
    openedAt,
    answer: null,
    answeredBy: null,
    answeredAt: null,
    closedAt: null,
  };
}

function memo(overrides: Partial<MemoRecord> = {}): MemoRecord {
  return {
    graph: 'claims',
    node: 'search',
    nodeVersion: 1,
    inputHash: 'in-1',
    output: JSON.stringify({ hits: 1 }),
    runId: 'r1',
    activation: 'search:1',
    at: 3_000,
    ...overrides,
  };
}

/**
 * The behaviour every `Store` implementation shares: runs and their history, sequence numbers,
 * listing, ownership (leases), timers, effects, waits and memos. Each test gets a fresh store
 * from `makeStore` and disposes of it with its `cleanup`. A store that cannot pass a test names
 * it in `skip`, with why.
 *
 * @example
 * import { afterEach, beforeEach, describe, expect, it } from 'vitest';
 * import { storeConformance } from 'waymark/testing';
 * storeConformance('MyStore', async () => ({ store: new MyStore(), cleanup: async () => {} }),
 *   { describe, it, beforeEach, afterEach, expect });
 */
export function storeConformance(
  name: string,
  makeStore: () => Promise<StoreFixture>,
  api: TestApi,
  options: ConformanceOptions = {},
): void {
  expect = api.expect;
  const { describe, beforeEach, afterEach } = api;
  const skips = new Map((options.skip ?? []).map((s) => [s.test, s.reason]));
  const named = new Set<string>();
  // Every test of the suite goes through here: a skipped one is still named, with its reason.
  const it = (test: string, body: () => Promise<void>) => {
    named.add(test);
    const reason = skips.get(test);
    api.it(
      reason === undefined ? test : `${test} [skipped: ${reason}]`,
      reason === undefined ? body : async () => {},
    );
  };
  describe(`${name} (store conformance)`, () => {
    let store: Store;
    let cleanup: () => Promise<void>;

    beforeEach(async () => {
      ({ store, cleanup } = await makeStore());
    });
    afterEach(async () => {
      await cleanup();
    });

    describe('runs and their history', () => {
      it('a new run loads with its first snapshot at seq 0, no events, and the current store format', async () => {
        await store.createRun(newRun('r1', { snapshot: '{"at":0}' }));
        const loaded = await store.loadRun('r1');
        expect(loaded).toEqual({
          run: {
            id: 'r1',
            graph: 'claims',
            graphHash: 'hash-1',
            graphVersion: 1,
            stateVersion: 1,
            format: storeFormatVersion,
            status: 'running',
            seq: 0,
            createdAt: 1_000,
            updatedAt: 1_000,
            error: null,
            labels: null,
            lease: null,
          },
          snapshot: { seq: 0, data: '{"at":0}' },
          events: [],
        });
        expect(await store.getRun('r1')).toEqual(loaded?.run);
      });

      it('keeps the labels a run was created with, as given, and null when it had none', async () => {
        await store.createRun(newRun('r1', { labels: '{"graphFile":"/tmp/g.ts"}' }));
        await store.createRun(newRun('r2'));
        expect((await store.getRun('r1'))?.labels).toBe('{"graphFile":"/tmp/g.ts"}');
        expect((await store.loadRun('r1'))?.run.labels).toBe('{"graphFile":"/tmp/g.ts"}');
        expect((await store.getRun('r2'))?.labels).toBeNull();
        expect((await store.listRuns()).map((r) => [r.id, r.labels])).toEqual([
          ['r2', null],
          ['r1', '{"graphFile":"/tmp/g.ts"}'],
        ]);
      });

      it('a commit moves the run to its seq, status, error and time', async () => {
        await store.createRun(newRun('r1'));
        await store.commit('r1', step(1));
        await store.commit(
          'r1',
          step(2, { status: 'failed', error: '{"code":"NODE_FAILED"}', snapshot: '{"at":2}' }),
        );
        expect(await store.getRun('r1')).toMatchObject({
          seq: 2,
          status: 'failed',
          error: '{"code":"NODE_FAILED"}',
          createdAt: 1_000,
          updatedAt: 1_002,
        });
      });

      it('loading reads the latest snapshot and only the events after it, in order', async () => {
        await store.createRun(newRun('r1'));
        await commitSteps(store, 'r1', 1, 7, [3, 5]);
        const loaded = await store.loadRun('r1');
        expect(loaded?.snapshot).toEqual({ seq: 5, data: '{"at":5}' });
        expect(loaded?.events.map((e) => e.seq)).toEqual([6, 7]);
        expect(loaded?.events[0]).toEqual({
          seq: 6,
          at: 1_006,
          event: '{"type":"completed","seq":6}',
          trace: null,
        });
      });

      it('keeps only the first and the newest snapshot: snapshotAt finds the first for rewinding', async () => {
        await store.createRun(newRun('r1'));
        await commitSteps(store, 'r1', 1, 7, [3, 5]);
        expect((await store.snapshotAt('r1', 0))?.seq).toBe(0);
        expect((await store.snapshotAt('r1', 4))?.seq).toBe(0); // the one at 3 was dropped for 5
        expect(await store.snapshotAt('r1', 99)).toEqual({ seq: 5, data: '{"at":5}' });
        expect(await store.snapshotAt('nope', 3)).toBeUndefined();
        expect((await store.usage('r1')).snapshots).toBe(2);
      });

      it('a run that stopped with a snapshot loads with no events to replay', async () => {
        await store.createRun(newRun('r1'));
        await commitSteps(store, 'r1', 1, 2);
        await store.commit('r1', step(3, { status: 'succeeded', snapshot: '{"done":true}' }));
        const loaded = await store.loadRun('r1');
        expect(loaded?.snapshot).toEqual({ seq: 3, data: '{"done":true}' });
        expect(loaded?.events).toEqual([]);
        expect(loaded?.run.status).toBe('succeeded');
      });

      it('stored text comes back exactly as written, whatever its characters and size', async () => {
        const event = JSON.stringify({
          note: 'naïve café — 日本語 🚀 "quoted" \\ \n\t',
          pad: 'x'.repeat(100_000),
        });
        const trace = JSON.stringify([{ node: 'plan', status: 'completed' }]);
        await store.createRun(newRun('r1', { snapshot: '{"emoji":"🧭"}' }));
        await store.commit('r1', step(1, { event, trace }));
        const loaded = await store.loadRun('r1');
        expect(loaded?.snapshot.data).toBe('{"emoji":"🧭"}');
        expect(loaded?.events[0]?.event).toBe(event);
        expect(loaded?.events[0]?.trace).toBe(trace);
      });

      it('events(afterSeq) returns the committed events after that seq, in order; all by default', async () => {
        await store.createRun(newRun('r1'));
        await commitSteps(store, 'r1', 1, 5, [2]);
        expect((await store.events('r1')).map((e) => e.seq)).toEqual([1, 2, 3, 4, 5]);
        expect((await store.events('r1', 3)).map((e) => e.seq)).toEqual([4, 5]);
        expect(await store.events('r1', 5)).toEqual([]);
      });

      it("a run's events do not leak into another run's history", async () => {
        await store.createRun(newRun('r1'));
        await store.createRun(newRun('r2'));
        await commitSteps(store, 'r1', 1, 3);
        await commitSteps(store, 'r2', 1, 1);
        expect((await store.events('r2')).map((e) => e.seq)).toEqual([1]);
        expect((await store.loadRun('r2'))?.events).toHaveLength(1);
        // Whatever afterSeq says: below 0, not a number, past the end.
        expect((await store.events('r2', -5)).map((e) => e.seq)).toEqual([1]);
        expect((await store.events('r2', Number.NaN)).map((e) => e.seq)).toEqual([1]);
        expect(await store.events('r1', Number.POSITIVE_INFINITY)).toEqual([]);
      });

      it('usage counts events and snapshots and their size in UTF-8 bytes, traces included', async () => {
        await store.createRun(newRun('r1', { snapshot: '"é"' })); // 4 bytes
        await store.commit('r1', step(1, { event: '"日本"', trace: '[1]' })); // 8 + 3 bytes
        await store.commit('r1', step(2, { event: '{}', snapshot: '"ab"' })); // 2 + 4 bytes
        expect(await store.usage('r1')).toEqual({
          events: 2,
          eventBytes: 13,
          snapshots: 2,
          snapshotBytes: 8,
        });
      });

      it('a run with no commits uses one snapshot and no events', async () => {
        await store.createRun(newRun('r1', { snapshot: '{}' }));
        expect(await store.usage('r1')).toEqual({
          events: 0,
          eventBytes: 0,
          snapshots: 1,
          snapshotBytes: 2,
        });
      });
    });

    describe('run ids and sequence numbers', () => {
      it('creating a run under a taken id fails with RUN_EXISTS and leaves the first run as it was', async () => {
        await store.createRun(newRun('r1', { graph: 'first', snapshot: '{"first":true}' }));
        await store.commit('r1', step(1));
        await rejectsWith(store.createRun(newRun('r1', { graph: 'second' })), 'RUN_EXISTS');
        const loaded = await store.loadRun('r1');
        expect(loaded?.run).toMatchObject({ graph: 'first', seq: 1 });
        expect(loaded?.snapshot).toEqual({ seq: 0, data: '{"first":true}' });
      });

      it('an unknown run loads as undefined and is not listed', async () => {
        expect(await store.loadRun('nope')).toBeUndefined();
        expect(await store.getRun('nope')).toBeUndefined();
        expect(await store.listRuns()).toEqual([]);
      });

      it('a commit, events, usage, effect or wait for a missing run fails with RUN_NOT_FOUND', async () => {
        await rejectsWith(store.commit('nope', step(1)), 'RUN_NOT_FOUND');
        await rejectsWith(store.events('nope'), 'RUN_NOT_FOUND');
        await rejectsWith(store.usage('nope'), 'RUN_NOT_FOUND');
        await rejectsWith(
          store.recordEffect({ runId: 'nope', key: 'k', result: '1', at: 1 }),
          'RUN_NOT_FOUND',
        );
        await rejectsWith(store.getEffect('nope', 'k'), 'RUN_NOT_FOUND');
        await rejectsWith(store.openWait(wait('nope', 'q1')), 'RUN_NOT_FOUND');
        await rejectsWith(store.answerWait('nope', 'q1', '"yes"', 'ana', 1), 'RUN_NOT_FOUND');
        await rejectsWith(store.listWaits('nope'), 'RUN_NOT_FOUND');
        expect(await store.getRun('nope')).toBeUndefined();
      });

      it('a commit for a stale seq fails with STORE_CONFLICT and stores nothing of it', async () => {
        await store.createRun(newRun('r1'));
        await commitSteps(store, 'r1', 1, 2);
        const stale = store.commit(
          'r1',
          step(2, { event: '"stale"', status: 'failed', snapshot: '"s"' }),
        );
        await expect(stale).rejects.toMatchObject({
          code: 'STORE_CONFLICT',
          details: { runId: 'r1', current: 2, attempted: 2 },
        });
        const loaded = await store.loadRun('r1');
        expect(loaded?.run).toMatchObject({ seq: 2, status: 'running', updatedAt: 1_002 });
        expect(loaded?.snapshot.seq).toBe(0);
        expect(loaded?.events.map((e) => e.event)).not.toContain('"stale"');
        expect((await store.usage('r1')).snapshots).toBe(1);
      });

      it('a commit that skips a seq fails with STORE_CONFLICT: history has no gaps', async () => {
        await store.createRun(newRun('r1'));
        await rejectsWith(store.commit('r1', step(2)), 'STORE_CONFLICT');
        expect(await store.events('r1')).toEqual([]);
        expect((await store.getRun('r1'))?.seq).toBe(0);
      });

      it('of two commits racing for the same seq exactly one is stored; the other fails with STORE_CONFLICT', async () => {
        await store.createRun(newRun('r1'));
        const a = step(1, { event: '"a"', status: 'succeeded', snapshot: '"snapshot a"' });
        const b = step(1, { event: '"b"', status: 'failed', error: '"b failed"' });
        const results = await Promise.allSettled([store.commit('r1', a), store.commit('r1', b)]);

        const won = results.flatMap((r, i) => (r.status === 'fulfilled' ? [[a, b][i]!] : []));
        const lost = results.flatMap((r) => (r.status === 'rejected' ? [r.reason] : []));
        expect(won).toHaveLength(1);
        expect(lost).toMatchObject([{ code: 'STORE_CONFLICT' }]);
        const winner = won[0]!;
        const loaded = await store.loadRun('r1');
        expect(loaded?.run).toMatchObject({ seq: 1, status: winner.status, error: winner.error });
        expect(await store.events('r1')).toEqual([
          { seq: 1, at: winner.at, event: winner.event, trace: null },
        ]);
        expect((await store.usage('r1')).snapshots).toBe(winner.snapshot === null ? 1 : 2);
      });
    });

    describe('listing runs', () => {
      beforeEach(async () => {
        await store.createRun(newRun('a', { createdAt: 10 }));
        await store.createRun(newRun('b', { createdAt: 30, graph: 'other' }));
        await store.createRun(newRun('c', { createdAt: 20 }));
        await store.createRun(newRun('d', { createdAt: 20, status: 'waiting' }));
        await store.commit('a', step(1, { status: 'succeeded', snapshot: '{}' }));
      });

      it('lists the newest runs first; runs created at the same time by id, descending', async () => {
        expect((await store.listRuns()).map((r) => r.id)).toEqual(['b', 'd', 'c', 'a']);
      });

      it('lists runs as their records, with the status of their last commit', async () => {
        const [a] = await store.listRuns({ status: 'succeeded' });
        expect(a).toEqual(await store.getRun('a'));
        expect(a).toMatchObject({ id: 'a', status: 'succeeded', seq: 1 });
      });

      it('filters by one status or any of several', async () => {
        expect((await store.listRuns({ status: 'running' })).map((r) => r.id)).toEqual(['b', 'c']);
        expect(
          (await store.listRuns({ status: ['waiting', 'succeeded'] })).map((r) => r.id),
        ).toEqual(['d', 'a']);
        expect(await store.listRuns({ status: [] })).toEqual([]);
      });

      it('filters by graph name', async () => {
        expect((await store.listRuns({ graph: 'other' })).map((r) => r.id)).toEqual(['b']);
        expect(
          (await store.listRuns({ graph: 'claims', status: 'running' })).map((r) => r.id),
        ).toEqual(['c']);
        expect(await store.listRuns({ graph: 'missing' })).toEqual([]);
      });

      it('filters by labels: a run must carry every one given, with its value', async () => {
        await store.createRun(newRun('t1', { createdAt: 40, labels: '{"thread":"t","turn":"1"}' }));
        await store.createRun(newRun('t2', { createdAt: 50, labels: '{"thread":"t","turn":"2"}' }));
        await store.createRun(newRun('u1', { createdAt: 60, labels: '{"thread":"u"}' }));
        expect((await store.listRuns({ labels: { thread: 't' } })).map((r) => r.id)).toEqual([
          't2',
          't1',
        ]);
        expect(
          (await store.listRuns({ labels: { thread: 't', turn: '1' } })).map((r) => r.id),
        ).toEqual(['t1']);
        expect(await store.listRuns({ labels: { thread: 'none' } })).toEqual([]);
        expect((await store.listRuns({ labels: {} })).map((r) => r.id)).toHaveLength(7);
        expect(
          (await store.listRuns({ labels: { thread: 't' }, limit: 1 })).map((r) => r.id),
        ).toEqual(['t2']);
      });

      it("pages by position: the runs after a page's last one, none skipped or repeated when runs are created meanwhile", async () => {
        const first = await store.listRuns({ limit: 2 });
        expect(first.map((r) => r.id)).toEqual(['b', 'd']);
        const last = first[1]!;
        await store.createRun(newRun('e', { createdAt: 25 }));
        await store.createRun(newRun('f', { createdAt: 5 }));
        const next = await store.listRuns({
          before: { createdAt: last.createdAt, id: last.id },
          limit: 2,
        });
        // c has d's time and a smaller id: it is next; e is newer than the page, so never here.
        expect(next.map((r) => r.id)).toEqual(['c', 'a']);
        expect(
          (await store.listRuns({ before: { createdAt: 10, id: 'a' } })).map((r) => r.id),
        ).toEqual(['f']);
        expect(
          (await store.listRuns({ before: { createdAt: 30, id: 'b' }, status: 'waiting' })).map(
            (r) => r.id,
          ),
        ).toEqual(['d']);
      });

      it('filters by creation time: since is inclusive, until exclusive', async () => {
        expect((await store.listRuns({ since: 20 })).map((r) => r.id)).toEqual(['b', 'd', 'c']);
        expect((await store.listRuns({ until: 20 })).map((r) => r.id)).toEqual(['a']);
        expect((await store.listRuns({ since: 20, until: 30 })).map((r) => r.id)).toEqual([
          'd',
          'c',
        ]);
        expect(await store.listRuns({ since: 31 })).toEqual([]);
      });

      it('limit keeps the newest runs after filtering', async () => {
        expect((await store.listRuns({ limit: 2 })).map((r) => r.id)).toEqual(['b', 'd']);
        expect((await store.listRuns({ graph: 'claims', limit: 2 })).map((r) => r.id)).toEqual([
          'd',
          'c',
        ]);
        expect(await store.listRuns({ limit: 0 })).toEqual([]);
        expect(await store.listRuns({ limit: -1 })).toEqual([]);
      });
    });

    describe('effects', () => {
      beforeEach(async () => {
        await store.createRun(newRun('r1'));
        await store.createRun(newRun('r2'));
      });

      it('the first recorded result of an effect stands; a later record returns it unchanged', async () => {
        const first = { runId: 'r1', key: 'r1/publish:1/post', result: '{"id":7}', at: 5 };
        expect(await store.recordEffect(first)).toEqual(first);
        const second = await store.recordEffect({ ...first, result: '{"id":8}', at: 6 });
        expect(second).toEqual(first);
        expect(await store.getEffect('r1', first.key)).toEqual(first);
      });

      it('of two records racing for one key, both get the one that stands', async () => {
        const key = 'r1/pay:1/charge';
        const [a, b] = await Promise.all([
          store.recordEffect({ runId: 'r1', key, result: '"a"', at: 1 }),
          store.recordEffect({ runId: 'r1', key, result: '"b"', at: 2 }),
        ]);
        expect(a).toEqual(b);
        expect(await store.getEffect('r1', key)).toEqual(a);
      });

      it('an effect key belongs to its run: the same key in another run is another effect', async () => {
        await store.recordEffect({ runId: 'r1', key: 'k', result: '"one"', at: 1 });
        expect(await store.getEffect('r2', 'k')).toBeUndefined();
        await store.recordEffect({ runId: 'r2', key: 'k', result: '"two"', at: 2 });
        expect((await store.getEffect('r1', 'k'))?.result).toBe('"one"');
        expect((await store.getEffect('r2', 'k'))?.result).toBe('"two"');
      });

      it('an effect never recorded is undefined', async () => {
        expect(await store.getEffect('r1', 'never')).toBeUndefined();
      });

      it("lists a run's effects in the order they were recorded, and only its own", async () => {
        expect(await store.listEffects('r1')).toEqual([]);
        const b = { runId: 'r1', key: 'r1/publish:1/post', result: '{"id":7}', at: 5 };
        const a = { runId: 'r1', key: 'r1/notify:1/mail', result: '"sent"', at: 3 };
        const c = { runId: 'r1', key: 'r1/notify:1/slack', result: '"ok"', at: 5 };
        await store.recordEffect(b);
        await store.recordEffect(c);
        await store.recordEffect(a);
        await store.recordEffect({ runId: 'r2', key: 'k', result: '1', at: 1 });
        // By time; two at the same time by key.
        expect(await store.listEffects('r1')).toEqual([a, c, b]);
        expect((await store.listEffects('r2')).map((e) => e.key)).toEqual(['k']);
        await expect(store.listEffects('nope')).rejects.toMatchObject({ code: 'RUN_NOT_FOUND' });
      });
    });

    describe('waits', () => {
      beforeEach(async () => {
        await store.createRun(newRun('r1'));
      });

      it('an answer is recorded once, with who gave it and when', async () => {
        await store.openWait(wait('r1', 'q1'));
        const answered = await store.answerWait('r1', 'q1', '{"ok":true}', 'ana', 2_500);
        expect(answered).toEqual({
          ...wait('r1', 'q1'),
          answer: '{"ok":true}',
          answeredBy: 'ana',
          answeredAt: 2_500,
        });
        expect(await store.listWaits('r1')).toEqual([answered]);
      });

      it('a second answer fails with WAIT_ALREADY_ANSWERED and the first one stands', async () => {
        await store.openWait(wait('r1', 'q1'));
        await store.answerWait('r1', 'q1', '"yes"', 'ana', 2_500);
        await rejectsWith(
          store.answerWait('r1', 'q1', '"no"', 'bob', 2_600),
          'WAIT_ALREADY_ANSWERED',
        );
        expect(await store.listWaits('r1')).toMatchObject([{ answer: '"yes"', answeredBy: 'ana' }]);
      });

      it('of two answers racing for one wait exactly one wins', async () => {
        await store.openWait(wait('r1', 'q1'));
        const results = await Promise.allSettled([
          store.answerWait('r1', 'q1', '"yes"', 'ana', 2_500),
          store.answerWait('r1', 'q1', '"no"', 'bob', 2_500),
        ]);
        const won = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
        const lost = results.flatMap((r) => (r.status === 'rejected' ? [r.reason] : []));
        expect(won).toHaveLength(1);
        expect(lost).toMatchObject([{ code: 'WAIT_ALREADY_ANSWERED' }]);
        expect(await store.listWaits('r1')).toEqual(won);
      });

      it('answering a wait the run does not have fails with WAIT_NOT_FOUND', async () => {
        await store.openWait(wait('r1', 'q1'));
        await rejectsWith(store.answerWait('r1', 'q2', '"yes"', 'ana', 1), 'WAIT_NOT_FOUND');
        expect(await store.listWaits('r1', { open: true })).toHaveLength(1);
      });

      it('opening the same wait again keeps the first record and its answer', async () => {
        await store.openWait(wait('r1', 'q1', 2_000));
        await store.answerWait('r1', 'q1', '"yes"', 'ana', 2_500);
        await store.openWait({ ...wait('r1', 'q1', 9_000), request: '"changed"' });
        expect(await store.listWaits('r1')).toMatchObject([
          { openedAt: 2_000, request: wait('r1', 'q1').request, answer: '"yes"' },
        ]);
      });

      it('lists waits oldest first; open: true lists the unanswered ones, open: false the answered', async () => {
        await store.openWait(wait('r1', 'late', 3_000));
        await store.openWait(wait('r1', 'early', 1_000));
        await store.openWait(wait('r1', 'middle', 2_000));
        await store.answerWait('r1', 'middle', '"done"', 'ana', 4_000);
        const ids = (waits: WaitRecord[]) => waits.map((w) => w.requestId);
        expect(ids(await store.listWaits('r1'))).toEqual(['early', 'middle', 'late']);
        expect(ids(await store.listWaits('r1', { open: true }))).toEqual(['early', 'late']);
        expect(ids(await store.listWaits('r1', { open: false }))).toEqual(['middle']);
      });

      it('a run with no waits lists none', async () => {
        expect(await store.listWaits('r1')).toEqual([]);
        expect(await store.listWaits('r1', { open: true })).toEqual([]);
      });
    });

    describe('ownership: one lease per run', () => {
      const me = { owner: 'me', host: 'host-a', pid: 101, leaseMs: 60_000 };
      const other = { owner: 'other', host: 'host-b', pid: 202, leaseMs: 60_000 };

      it('a first lease has epoch 1 and expires leaseMs from now by the store clock', async () => {
        await store.createRun(newRun('r1'));
        const before = Date.now();
        const lease = await store.acquire('r1', me);
        expect(lease).toMatchObject({ runId: 'r1', owner: 'me', epoch: 1 });
        // The store's clock decides; a database on this machine agrees with ours within seconds.
        expect(Math.abs(lease.expiresAt - (before + 60_000)) < 10_000).toBe(true);
        expect((await store.getRun('r1'))?.lease).toEqual({
          owner: 'me',
          host: 'host-a',
          pid: 101,
          epoch: 1,
          expiresAt: lease.expiresAt,
          live: true,
        });
      });

      it('a live lease refuses another owner with RUN_OWNED, naming who holds it and until when', async () => {
        await store.createRun(newRun('r1'));
        const held = await store.acquire('r1', me);
        await expect(store.acquire('r1', other)).rejects.toMatchObject({
          code: 'RUN_OWNED',
          details: {
            runId: 'r1',
            owner: 'me',
            host: 'host-a',
            pid: 101,
            epoch: 1,
            expiresAt: held.expiresAt,
          },
        });
        expect((await store.getRun('r1'))?.lease).toMatchObject({ owner: 'me', epoch: 1 });
      });

      it('the same owner acquiring again keeps its epoch', async () => {
        await store.createRun(newRun('r1'));
        await store.acquire('r1', me);
        expect((await store.acquire('r1', me)).epoch).toBe(1);
      });

      it('a released or expired lease is taken by another owner with the next epoch', async () => {
        await store.createRun(newRun('r1'));
        const mine = await store.acquire('r1', me);
        await store.release(mine);
        expect((await store.getRun('r1'))?.lease).toMatchObject({ live: false, expiresAt: 0 });
        const theirs = await store.acquire('r1', { ...other, leaseMs: 1 });
        expect(theirs.epoch).toBe(2);
        await new Promise((resolve) => setTimeout(resolve, 30));
        expect((await store.getRun('r1'))?.lease?.live).toBe(false);
        expect((await store.acquire('r1', me)).epoch).toBe(3);
      });

      it('a take-over at the epoch seen wins a live lease; at any other epoch it is refused', async () => {
        await store.createRun(newRun('r1'));
        await store.acquire('r1', me);
        await rejectsWith(store.acquire('r1', { ...other, takeOver: 7 }), 'RUN_OWNED');
        expect((await store.acquire('r1', { ...other, takeOver: 1 })).epoch).toBe(2);
        // The dead owner's twin, taking over at the same epoch, now finds a live owner.
        await rejectsWith(
          store.acquire('r1', { owner: 'third', leaseMs: 1_000, takeOver: 1 }),
          'RUN_OWNED',
        );
      });

      it("commits are fenced by the lease's epoch: the old owner's are refused with LEASE_LOST and write nothing", async () => {
        await store.createRun(newRun('r1'));
        const old = await store.acquire('r1', me);
        await store.commit('r1', step(1, { epoch: old.epoch }));
        await store.acquire('r1', { ...other, takeOver: old.epoch });
        await rejectsWith(
          store.commit(
            'r1',
            step(2, {
              epoch: old.epoch,
              snapshot: '{"late":true}',
              timers: { set: [{ runId: 'r1', id: 't', at: 5 }] },
            }),
          ),
          'LEASE_LOST',
        );
        expect((await store.getRun('r1'))?.seq).toBe(1);
        expect(await store.listTimers('r1')).toEqual([]);
        await store.commit('r1', step(2, { epoch: 2 }));
        // Without an epoch, a commit is fenced by its seq alone (a cancellation from outside).
        await store.commit('r1', step(3));
        expect((await store.getRun('r1'))?.seq).toBe(3);
      });

      it('a commit under an epoch on a run nobody leased is refused', async () => {
        await store.createRun(newRun('r1'));
        await rejectsWith(store.commit('r1', step(1, { epoch: 1 })), 'LEASE_LOST');
      });

      it('renews many leases in one call, and reports those another owner took as lost', async () => {
        await store.createRun(newRun('r1'));
        await store.createRun(newRun('r2'));
        const a = await store.acquire('r1', { ...me, leaseMs: 1_000 });
        const b = await store.acquire('r2', { ...me, leaseMs: 1_000 });
        await store.release(b);
        await store.acquire('r2', other);
        const { renewed, lost } = await store.renew([a, b], 120_000);
        expect(lost).toEqual(['r2']);
        expect(renewed).toHaveLength(1);
        expect(renewed[0]?.runId).toBe('r1');
        expect(renewed[0]!.expiresAt > a.expiresAt).toBe(true);
        expect((await store.getRun('r1'))?.lease?.expiresAt).toBe(renewed[0]?.expiresAt);
      });

      it('a last commit may give its lease up with it: another owner takes the run at once, and no renewal takes it back', async () => {
        await store.createRun(newRun('r1'));
        const mine = await store.acquire('r1', me);
        await store.commit(
          'r1',
          step(1, { epoch: mine.epoch, status: 'failed', snapshot: '{"at":1}', release: true }),
        );
        expect((await store.getRun('r1'))?.lease).toMatchObject({ live: false, expiresAt: 0 });
        expect((await store.renew([mine], 60_000)).lost).toEqual(['r1']);
        expect((await store.acquire('r1', other)).epoch).toBe(2);
      });

      it('a stale lease releases nothing', async () => {
        await store.createRun(newRun('r1'));
        const old = await store.acquire('r1', { ...me, leaseMs: 1 });
        await new Promise((resolve) => setTimeout(resolve, 20));
        await store.acquire('r1', other);
        await store.release(old);
        expect((await store.getRun('r1'))?.lease).toMatchObject({ owner: 'other', live: true });
      });

      it('a lease on a run that does not exist is RUN_NOT_FOUND', async () => {
        await rejectsWith(store.acquire('nope', me), 'RUN_NOT_FOUND');
      });

      it('listing runs shows each run with its lease', async () => {
        await store.createRun(newRun('r1', { createdAt: 1 }));
        await store.createRun(newRun('r2', { createdAt: 2 }));
        await store.acquire('r1', me);
        expect((await store.listRuns()).map((r) => [r.id, r.lease?.owner ?? null])).toEqual([
          ['r2', null],
          ['r1', 'me'],
        ]);
      });
    });

    describe('timers', () => {
      it('a commit sets and clears timers; a set replaces the one of the same id', async () => {
        await store.createRun(newRun('r1'));
        await store.commit(
          'r1',
          step(1, {
            timers: {
              set: [
                { runId: 'r1', id: 'deadline', at: 9_000 },
                { runId: 'r1', id: 'wait:q', at: 5_000 },
              ],
            },
          }),
        );
        expect(await store.listTimers('r1')).toEqual([
          { runId: 'r1', id: 'wait:q', at: 5_000 },
          { runId: 'r1', id: 'deadline', at: 9_000 },
        ]);
        await store.commit(
          'r1',
          step(2, {
            timers: { set: [{ runId: 'r1', id: 'deadline', at: 7_000 }], clear: ['wait:q'] },
          }),
        );
        expect(await store.listTimers('r1')).toEqual([{ runId: 'r1', id: 'deadline', at: 7_000 }]);
      });

      it('lists the timers due by a time across runs, soonest first, up to a limit', async () => {
        await store.createRun(newRun('r1'));
        await store.createRun(newRun('r2'));
        await store.commit('r1', step(1, { timers: { set: [{ runId: 'r1', id: 'a', at: 300 }] } }));
        await store.commit(
          'r2',
          step(1, {
            timers: {
              set: [
                { runId: 'r2', id: 'b', at: 100 },
                { runId: 'r2', id: 'c', at: 900 },
              ],
            },
          }),
        );
        expect(await store.dueTimers(500)).toEqual([
          { runId: 'r2', id: 'b', at: 100 },
          { runId: 'r1', id: 'a', at: 300 },
        ]);
        expect(await store.dueTimers(500, 1)).toEqual([{ runId: 'r2', id: 'b', at: 100 }]);
        expect(await store.dueTimers(50)).toEqual([]);
      });
    });

    describe('waits opened and closed by commits', () => {
      it('a commit opens its waits with the step, and a later one closes them unanswered', async () => {
        await store.createRun(newRun('r1'));
        await store.commit(
          'r1',
          step(1, { waits: { open: [wait('r1', 'q1'), wait('r1', 'q2')] } }),
        );
        expect((await store.listWaits('r1', { open: true })).map((w) => w.requestId)).toEqual([
          'q1',
          'q2',
        ]);
        await store.answerWait('r1', 'q2', '"yes"', 'ana', 2_100);
        await store.commit('r1', step(2, { waits: { close: ['q1', 'q2'] } }));
        expect(await store.listWaits('r1', { open: true })).toEqual([]);
        const [q1, q2] = await store.listWaits('r1');
        expect(q1?.closedAt).toBe(1_002);
        // An answered wait stays answered: closing is only for waits nobody answered.
        expect(q2).toMatchObject({ answer: '"yes"', closedAt: null });
        await rejectsWith(store.answerWait('r1', 'q1', '"late"', 'bob', 2_200), 'WAIT_CLOSED');
        expect((await store.listWaits('r1'))[0]?.answer).toBeNull();
      });

      it('a refused commit opens no wait and sets no timer: all of a step, or none of it', async () => {
        await store.createRun(newRun('r1'));
        await rejectsWith(
          store.commit(
            'r1',
            step(2, {
              waits: { open: [wait('r1', 'q1')] },
              timers: { set: [{ runId: 'r1', id: 'x', at: 1 }] },
            }),
          ),
          'STORE_CONFLICT',
        );
        expect(await store.listWaits('r1')).toEqual([]);
        expect(await store.listTimers('r1')).toEqual([]);
      });

      it('re-opening a wait a commit opened keeps the first record', async () => {
        await store.createRun(newRun('r1'));
        await store.commit('r1', step(1, { waits: { open: [wait('r1', 'q1', 2_000)] } }));
        await store.commit('r1', step(2, { waits: { open: [wait('r1', 'q1', 9_000)] } }));
        expect((await store.listWaits('r1')).map((w) => w.openedAt)).toEqual([2_000]);
      });
    });

    describe('memos', () => {
      it('finds the memo recorded last for a node, node version and input hash, from any run', async () => {
        await store.putMemo(memo({ runId: 'r1', output: '"first"' }));
        await store.putMemo(memo({ runId: 'r2', output: '"second"' }));
        expect(await store.findMemo('claims', 'search', 1, 'in-1')).toEqual(
          memo({ runId: 'r2', output: '"second"' }),
        );
      });

      it('a memo is found only when graph, node, node version and input hash all match', async () => {
        await store.putMemo(memo());
        expect(await store.findMemo('claims', 'search', 1, 'in-1')).toEqual(memo());
        expect(await store.findMemo('claims', 'search', 2, 'in-1')).toBeUndefined();
        expect(await store.findMemo('claims', 'search', 1, 'in-2')).toBeUndefined();
        expect(await store.findMemo('claims', 'verify', 1, 'in-1')).toBeUndefined();
        expect(await store.findMemo('other', 'search', 1, 'in-1')).toBeUndefined();
      });

      it('memos of other versions or inputs do not hide the matching one', async () => {
        await store.putMemo(memo({ output: '"v1"' }));
        await store.putMemo(memo({ nodeVersion: 2, output: '"v2"' }));
        await store.putMemo(memo({ inputHash: 'in-9', output: '"in-9"' }));
        expect((await store.findMemo('claims', 'search', 1, 'in-1'))?.output).toBe('"v1"');
        expect((await store.findMemo('claims', 'search', 2, 'in-1'))?.output).toBe('"v2"');
      });
    });
    it('skips only tests the suite has, each with a reason', async () => {
      expect([...skips.keys()].filter((test) => !named.has(test))).toEqual([]);
      expect([...skips.values()].filter((reason) => reason.trim() === '')).toEqual([]);
    });
  });
}
