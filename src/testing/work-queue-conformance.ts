import type { ErrorCode } from '../error/codes.js';
import type { ClaimedTask, Lease, Store, TaskRecord, WorkClaim } from '../store/store.js';
import type { WorkQueue } from '../store/work-queue.js';
import {
  type ConformanceOptions,
  type Expect,
  sampleCommit,
  sampleRun,
  type TestApi,
} from './store-conformance.js';

// The behaviour every store that serves workers shares (work-queue.ts), as one suite: memory,
// SQLite and PostgreSQL here, and a third party's. Like storeConformance, it takes the test
// framework's functions instead of importing one.

/** A fresh, empty store that serves workers, a second handle on it if it has one, and cleanup. */
export interface WorkQueueFixture {
  readonly store: Store & WorkQueue;
  /**
   * Another connection to the same data (another process would open one), for claims made
   * side by side; absent for a store only one process can open (memory): `store` is used.
   */
  readonly other?: Store & WorkQueue;
  cleanup(): Promise<void>;
}

let expect: Expect;

const graphs = [{ name: 'claims', hash: 'hash-1' }];

function claimOf(owner: string, overrides: Partial<WorkClaim> = {}): WorkClaim {
  return { owner, host: 'host-a', pid: 101, leaseMs: 60_000, graphs, limit: 10, ...overrides };
}

function task(runId: string, activation: string, overrides: Partial<TaskRecord> = {}): TaskRecord {
  return {
    runId,
    activation,
    attempt: 1,
    node: activation.split(':')[0]!,
    graph: 'claims',
    graphHash: 'hash-1',
    notBefore: null,
    input: JSON.stringify({ activation }),
    ...overrides,
  };
}

async function rejectsWith(promise: Promise<unknown>, code: ErrorCode): Promise<void> {
  await expect(promise).rejects.toMatchObject({ code });
}

/** Long enough for a 1 ms lease to be past by any store's clock. */
function pastShortLeases(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 40));
}

const ids = (leases: readonly { readonly runId: string }[]) => leases.map((l) => l.runId).sort();
const keys = (tasks: readonly ClaimedTask[]) =>
  tasks.map((t) => `${t.runId}/${t.activation}`).sort();

/**
 * The behaviour every store that serves workers shares: workers registered and listed, runs
 * and tasks claimed by one worker at a time, lease epochs that fence a stale holder, expired
 * leases claimed again, task results into the run's inbox, and an inbox consumed once. Each
 * test gets a fresh store from `makeStore`.
 *
 * @example
 * import { afterEach, beforeEach, describe, expect, it } from 'vitest';
 * import { workQueueConformance } from 'waymark/testing';
 * workQueueConformance('MyStore', async () => ({ store: new MyStore(), cleanup: async () => {} }),
 *   { describe, it, beforeEach, afterEach, expect });
 */
export function workQueueConformance(
  name: string,
  makeStore: () => Promise<WorkQueueFixture>,
  api: TestApi,
  options: ConformanceOptions = {},
): void {
  expect = api.expect;
  const { describe, beforeEach, afterEach } = api;
  const skips = new Map((options.skip ?? []).map((s) => [s.test, s.reason]));
  const it = (test: string, body: () => Promise<void>) => {
    const reason = skips.get(test);
    api.it(
      reason === undefined ? test : `${test} [skipped: ${reason}]`,
      reason === undefined ? body : async () => {},
    );
  };
  describe(`${name} (work queue conformance)`, () => {
    let store: Store & WorkQueue;
    let other: Store & WorkQueue;
    let cleanup: () => Promise<void>;

    beforeEach(async () => {
      const fixture = await makeStore();
      store = fixture.store;
      other = fixture.other ?? fixture.store;
      cleanup = fixture.cleanup;
    });
    afterEach(async () => {
      await cleanup();
    });

    /** Claims run `runId` (it must be claimable) and schedules `activations` as its tasks. */
    async function scheduled(runId: string, ...activations: string[]): Promise<Lease> {
      const [claimed] = await store.claimAndLoadRuns(claimOf('folder'));
      expect(claimed?.lease.runId).toBe(runId);
      const lease = claimed!.lease;
      await store.commitAll(runId, [
        sampleCommit(1, {
          epoch: lease.epoch,
          schedule: { tasks: activations.map((a) => task(runId, a)) },
        }),
      ]);
      return lease;
    }

    describe('workers', () => {
      it('a registered worker is listed, live, with the graphs it runs, until it unregisters', async () => {
        await store.registerWorker({ id: 'w1', host: 'h', pid: 7, graphs, leaseMs: 60_000 });
        await store.registerWorker({ id: 'w2', host: 'h', pid: 8, graphs: [], leaseMs: 60_000 });
        const listed = await other.listWorkers();
        expect(listed.map((w) => [w.id, w.host, w.pid, w.graphs, w.live])).toEqual([
          ['w1', 'h', 7, graphs, true],
          ['w2', 'h', 8, [], true],
        ]);
        await store.unregisterWorker('w1');
        expect((await store.listWorkers()).map((w) => w.id)).toEqual(['w2']);
      });

      it('a worker not registered again within its lease is listed as not live', async () => {
        await store.registerWorker({ id: 'w1', host: 'h', pid: 7, graphs, leaseMs: 1 });
        await pastShortLeases();
        expect((await store.listWorkers()).map((w) => w.live)).toEqual([false]);
        await store.registerWorker({ id: 'w1', host: 'h', pid: 7, graphs, leaseMs: 60_000 });
        expect((await store.listWorkers()).map((w) => w.live)).toEqual([true]);
      });
    });

    describe('claims of runs', () => {
      it('a run is claimed by one worker at a time, with what its fold reads', async () => {
        for (const id of ['r1', 'r2', 'r3']) await store.createRun(sampleRun(id));
        await store.createRun(sampleRun('elsewhere', { graph: 'other' }));
        const [a, b] = await Promise.all([
          store.claimAndLoadRuns(claimOf('a', { limit: 2 })),
          other.claimAndLoadRuns(claimOf('b', { limit: 2 })),
        ]);
        const all = [...a!, ...b!].map((c) => c.lease);
        expect(ids(all)).toEqual(['r1', 'r2', 'r3']);
        for (const claimed of [...a!, ...b!]) {
          expect(claimed.lease.epoch).toBe(1);
          expect('run' in claimed && claimed.run.snapshot.seq).toBe(0);
          expect('inbox' in claimed && claimed.inbox).toEqual([]);
        }
        // Every lease is live: nobody claims them again.
        expect(await store.claimAndLoadRuns(claimOf('c'))).toEqual([]);
        const r1 = await store.getRun('r1');
        expect(r1?.lease?.live).toBe(true);
      });

      it('an expired lease is claimed again, at the next epoch, and the stale holder is fenced off', async () => {
        await store.createRun(sampleRun('r1'));
        const [stale] = await store.claimAndLoadRuns(claimOf('a', { leaseMs: 1 }));
        await pastShortLeases();
        const [fresh] = await other.claimAndLoadRuns(claimOf('b'));
        expect(fresh?.lease).toMatchObject({ runId: 'r1', owner: 'b', epoch: 2 });
        const commit = sampleCommit(1, { epoch: stale!.lease.epoch });
        await rejectsWith(store.commitAll('r1', [commit]), 'LEASE_LOST');
        await rejectsWith(store.commit('r1', commit), 'LEASE_LOST');
        expect((await store.getRun('r1'))?.seq).toBe(0);
        await other.commitAll('r1', [sampleCommit(1, { epoch: 2 }), sampleCommit(2, { epoch: 2 })]);
        expect((await store.getRun('r1'))?.seq).toBe(2);
      });

      it('a run with nothing to fold is not claimed; a wake-up in its inbox makes it claimable', async () => {
        await store.createRun(sampleRun('r1'));
        const lease = await scheduled('r1', 'a:1');
        await store.release(lease);
        // Released, with its task queued: nothing for a fold to do.
        expect(await store.claimAndLoadRuns(claimOf('b'))).toEqual([]);
        await store.wake('r1', 5_000);
        const [claimed] = await other.claimAndLoadRuns(claimOf('b'));
        expect(claimed?.lease.epoch).toBe(lease.epoch + 1);
        expect('inbox' in claimed! && claimed.inbox.map((i) => [i.attempt, i.at])).toEqual([
          [null, 5_000],
        ]);
      });

      it('a failed fold is counted and keeps the run out of claims; failRun ends it and drops its queued work', async () => {
        await store.createRun(sampleRun('r1'));
        const lease = await scheduled('r1', 'a:1');
        expect(await store.foldFailed(lease, 60_000)).toBe(1);
        expect(await store.foldFailed(lease, 60_000)).toBe(2);
        // Woken, but kept for its back-off: no claim takes it.
        await store.wake('r1', 1);
        expect(await other.claimAndLoadRuns(claimOf('b'))).toEqual([]);
        // A stale holder counts nothing and fails nothing.
        const stale = { ...lease, epoch: lease.epoch - 1 };
        expect(await store.foldFailed(stale, 1)).toBe(0);
        expect(await store.failRun(stale, { error: '{}', at: 1 })).toBe(false);
        expect(await store.failRun(lease, { error: '{"code":"FOLD_FAILED"}', at: 2 })).toBe(true);
        const run = await store.getRun('r1');
        expect(run).toMatchObject({ status: 'failed', error: '{"code":"FOLD_FAILED"}' });
        expect(await store.listTasks('r1')).toEqual([]);
        expect(await store.inbox('r1')).toEqual([]);
        expect(await store.failRun(lease, { error: '{}', at: 3 })).toBe(false);
      });

      it('a group of commits is all or none: a stale one writes nothing', async () => {
        await store.createRun(sampleRun('r1'));
        const [claimed] = await store.claimAndLoadRuns(claimOf('a'));
        const epoch = claimed!.lease.epoch;
        await store.commitAll('r1', [sampleCommit(1, { epoch })]);
        await rejectsWith(
          store.commitAll('r1', [sampleCommit(1, { epoch }), sampleCommit(2, { epoch })]),
          'STORE_CONFLICT',
        );
        expect((await store.events('r1')).map((e) => e.seq)).toEqual([1]);
      });

      it('commitRuns writes each plain group that holds, and nothing of one that does not', async () => {
        for (const id of ['r1', 'r2']) await store.createRun(sampleRun(id));
        const claimed = await store.claimAndLoadRuns(claimOf('a'));
        const epochOf = (id: string) => claimed.find((c) => c.lease.runId === id)!.lease.epoch;
        const written = await store.commitRuns([
          { runId: 'r1', commits: [sampleCommit(1, { epoch: epochOf('r1') })] },
          { runId: 'r2', commits: [sampleCommit(1, { epoch: epochOf('r2') + 5 })] },
        ]);
        expect(written).toEqual([true, false]);
        expect((await store.getRun('r1'))?.seq).toBe(1);
        expect((await store.getRun('r2'))?.seq).toBe(0);
      });

      it('createRuns records all the runs or none', async () => {
        await store.createRun(sampleRun('r2'));
        await rejectsWith(
          store.createRuns([sampleRun('r1'), sampleRun('r2'), sampleRun('r3')]),
          'RUN_EXISTS',
        );
        expect(await store.getRun('r1')).toBeUndefined();
        await store.createRuns([sampleRun('r4'), sampleRun('r5')], { wake: true });
        expect((await store.inbox('r4')).map((i) => i.attempt)).toEqual([null]);
        expect(await store.inbox('r5')).toEqual([]);
      });
    });

    describe('tasks', () => {
      it('each task is claimed by one worker, at epoch + 1, and not again while its lease lives', async () => {
        await store.createRun(sampleRun('r1'));
        await scheduled('r1', 'a:1', 'b:1', 'c:1');
        const queued = await store.listTasks('r1');
        expect(queued.map((t) => [t.activation, t.owner, t.epoch])).toEqual([
          ['a:1', '', 0],
          ['b:1', '', 0],
          ['c:1', '', 0],
        ]);
        const [a, b] = await Promise.all([
          store.claimTasks(claimOf('a', { limit: 2 })),
          other.claimTasks(claimOf('b', { limit: 2 })),
        ]);
        expect(keys([...a!, ...b!])).toEqual(['r1/a:1', 'r1/b:1', 'r1/c:1']);
        for (const t of [...a!, ...b!]) expect(t.epoch).toBe(1);
        expect(await store.claimTasks(claimOf('c'))).toEqual([]);
      });

      it('a task not yet due is not claimed', async () => {
        await store.createRun(sampleRun('r1'));
        const [claimed] = await store.claimAndLoadRuns(claimOf('folder'));
        const later = Date.now() + 3_600_000;
        await store.commit(
          'r1',
          sampleCommit(1, {
            epoch: claimed!.lease.epoch,
            schedule: { tasks: [task('r1', 'a:2', { attempt: 2, notBefore: later })] },
          }),
        );
        expect(await store.claimTasks(claimOf('a'))).toEqual([]);
      });

      it("a task's result goes to its run's inbox once, fenced by the task's lease", async () => {
        await store.createRun(sampleRun('r1'));
        await scheduled('r1', 'a:1');
        const [stale] = await store.claimTasks(claimOf('a', { leaseMs: 1 }));
        await pastShortLeases();
        const [fresh] = await other.claimTasks(claimOf('b'));
        expect(fresh).toMatchObject({ activation: 'a:1', owner: 'b', epoch: 2 });
        expect((await store.renewTasks([stale!], 60_000)).lost).toEqual(['r1/a:1']);
        expect((await other.renewTasks([fresh!], 60_000)).renewed.map((t) => t.epoch)).toEqual([2]);
        const ended = (t: ClaimedTask, attempt: string) => ({ task: t, attempt, at: 3_000 });
        expect(await store.finishTasks([ended(stale!, '"stale"')])).toEqual([false]);
        expect(await other.finishTasks([ended(fresh!, '"fresh"')])).toEqual([true]);
        expect(await other.finishTasks([ended(fresh!, '"again"')])).toEqual([false]);
        expect((await store.inbox('r1')).map((i) => i.attempt)).toEqual(['"fresh"']);
        expect(await store.listTasks('r1')).toEqual([]);
      });

      it('a task given back is claimed at once by another worker; a cancelled one is gone', async () => {
        await store.createRun(sampleRun('r1'));
        const lease = await scheduled('r1', 'a:1', 'b:1');
        const [a, b] = await store.claimTasks(claimOf('a'));
        await store.releaseTask(a!);
        const [again] = await other.claimTasks(claimOf('b'));
        expect(again).toMatchObject({ activation: a!.activation, owner: 'b', epoch: 2 });
        await store.commit(
          'r1',
          sampleCommit(2, { epoch: lease.epoch, schedule: { cancel: [b!.activation] } }),
        );
        expect((await store.listTasks('r1')).map((t) => t.activation)).toEqual([a!.activation]);
        expect(await store.finishTasks([{ task: b!, attempt: '"late"', at: 3_000 }])).toEqual([
          false,
        ]);
      });

      it('a retry scheduled again replaces its task and fences the worker still running it', async () => {
        await store.createRun(sampleRun('r1'));
        const lease = await scheduled('r1', 'a:1');
        const [running] = await store.claimTasks(claimOf('a'));
        await store.commit(
          'r1',
          sampleCommit(2, {
            epoch: lease.epoch,
            schedule: { tasks: [task('r1', 'a:1', { attempt: 2 })] },
          }),
        );
        expect(await store.finishTasks([{ task: running!, attempt: '"1"', at: 1 }])).toEqual([
          false,
        ]);
        const [retry] = await other.claimTasks(claimOf('b'));
        expect(retry).toMatchObject({ activation: 'a:1', attempt: 2 });
        expect(retry!.epoch > running!.epoch).toBe(true);
      });
    });

    describe('the inbox', () => {
      it('an inbox item is folded once: the commit that folds it removes it', async () => {
        await store.createRun(sampleRun('r1'));
        const first = await scheduled('r1', 'a:1');
        const [t] = await store.claimTasks(claimOf('a'));
        await store.finishTasks([{ task: t!, attempt: '"done"', at: 3_000 }]);
        await store.release(first);
        const [claimed] = await other.claimAndLoadRuns(claimOf('b'));
        const inbox = 'inbox' in claimed! ? claimed.inbox : [];
        expect(inbox.map((i) => i.attempt)).toEqual(['"done"']);
        await other.commit(
          'r1',
          sampleCommit(2, {
            epoch: claimed!.lease.epoch,
            schedule: { consumed: inbox.map((i) => i.id) },
          }),
        );
        expect(await store.inbox('r1')).toEqual([]);
      });

      it('an answer is recorded with its wake-up, at once: a second answer adds none', async () => {
        await store.createRun(sampleRun('r1'));
        await store.openWait({
          runId: 'r1',
          requestId: 'r1/approve:1',
          node: 'approve',
          activation: 'approve:1',
          request: '{}',
          openedAt: 2_000,
          answer: null,
          answeredBy: null,
          answeredAt: null,
          closedAt: null,
        });
        await store.answerWait('r1', 'r1/approve:1', 'true', 'lead', 3_000);
        expect(await store.inbox('r1')).toMatchObject([{ runId: 'r1', attempt: null, at: 3_000 }]);
        await expect(
          store.answerWait('r1', 'r1/approve:1', 'false', 'other', 4_000),
        ).rejects.toMatchObject({ code: 'WAIT_ALREADY_ANSWERED' });
        expect((await store.inbox('r1')).length).toBe(1);
      });

      it("consume removes items only under the run's current lease", async () => {
        await store.createRun(sampleRun('r1'));
        const [claimed] = await store.claimAndLoadRuns(claimOf('a'));
        const lease = claimed!.lease;
        await store.wake('r1', 4_000);
        const [item] = await store.inbox('r1');
        await store.consume('r1', { ...lease, epoch: lease.epoch + 1 }, [item!.id]);
        expect((await store.inbox('r1')).length).toBe(1);
        await store.consume('r1', lease, [item!.id]);
        expect(await store.inbox('r1')).toEqual([]);
      });
    });

    describe('deleting runs', () => {
      it('a task a worker holds refuses the delete (RUN_LIVE); once given back, tasks and inbox go with the run', async () => {
        await store.createRun(sampleRun('r1'));
        const [claimed] = await store.claimAndLoadRuns(claimOf('folder'));
        const lease = claimed!.lease;
        await store.commitAll('r1', [
          sampleCommit(1, {
            status: 'waiting',
            epoch: lease.epoch,
            release: true,
            schedule: { tasks: [task('r1', 'a:1'), task('r1', 'b:1')] },
          }),
        ]);
        const [held] = await store.claimTasks(claimOf('worker', { limit: 1 }));
        await rejectsWith(other.deleteRun('r1', { force: true }), 'RUN_LIVE');
        await store.releaseTask(held!);
        await store.wake('r1', 4_000);
        await other.deleteRun('r1', { force: true });
        expect(await store.listTasks('r1')).toEqual([]);
        expect(await store.inbox('r1')).toEqual([]);
        expect(await store.claimTasks(claimOf('worker'))).toEqual([]);
        expect(await store.claimAndLoadRuns(claimOf('folder'))).toEqual([]);
      });
    });

    describe('news of work', () => {
      it('waitForWork resolves after its ms with no news, and at once when its signal aborts', async () => {
        const signal = new AbortController();
        await store.waitForWork(20, signal.signal, store.notifiedOf('tasks'), 'tasks');
        const waiting = store.waitForWork(60_000, signal.signal, store.notifiedOf('runs'), 'runs');
        signal.abort();
        await waiting;
        expect(typeof store.listening).toBe('boolean');
      });
    });
  });
}
