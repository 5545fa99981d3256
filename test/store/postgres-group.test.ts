import fc from 'fast-check';
import { afterAll, afterEach, expect, it, vi } from 'vitest';
import { PostgresStore } from '../../src/postgres.js';
import { RunCommitter } from '../../src/runtime/worker/run-committer.js';
import type { Commit, TaskRecord, WaitRecord } from '../../src/store/store.js';
import { sampleRun as newRun, sampleCommit as step } from '../../src/testing/index.js';
import {
  describePg,
  dropSchema,
  schemaName,
  skipReason,
  testPool,
  truncate,
} from './fixtures/postgres.js';

// A worker's fold commits every step it took in one statement (`commitAll`): these pin down
// that a group leaves exactly what its commits one by one would, and that it is all or none.

const schema = schemaName();
const pool = skipReason === undefined ? testPool({ max: 4 }) : undefined;

afterAll(async () => {
  if (pool === undefined) return;
  await dropSchema(pool, schema);
  await pool.end();
});

// Each test opens the stores it needs; they are closed, and the schema emptied, after it.
const opened: PostgresStore[] = [];
function open(): PostgresStore {
  const store = new PostgresStore({ pool: pool!, schema });
  opened.push(store);
  return store;
}

afterEach(async () => {
  vi.restoreAllMocks();
  for (const store of opened.splice(0)) await store.close();
  if (pool !== undefined) await truncate(pool, schema);
});

function wait(runId: string, requestId: string, openedAt: number): WaitRecord {
  return {
    runId,
    requestId,
    node: 'approve',
    activation: `approve:${requestId}`,
    request: '{}',
    openedAt,
    answer: null,
    answeredBy: null,
    answeredAt: null,
  };
}

function task(runId: string, activation: string, attempt = 1): TaskRecord {
  return {
    runId,
    activation,
    attempt,
    node: 'work',
    graph: 'claims',
    graphHash: 'hash-1',
    notBefore: null,
    input: `{"attempt":${attempt}}`,
  };
}

/** What a run's rows say, as a test compares them: epochs and owners of tasks aside. */
async function rowsOf(store: PostgresStore, runId: string) {
  const run = await store.getRun(runId);
  const loaded = await store.loadRun(runId);
  return {
    run: { seq: run?.seq, status: run?.status, error: run?.error, updatedAt: run?.updatedAt },
    events: (await store.events(runId)).map(({ seq, at, event, trace }) => ({
      seq,
      at,
      event,
      trace,
    })),
    snapshot: loaded?.snapshot,
    waits: (await store.listWaits(runId)).sort((a, b) => a.requestId.localeCompare(b.requestId)),
    timers: (await store.listTimers(runId)).sort((a, b) => a.id.localeCompare(b.id)),
    tasks: (await store.listTasks(runId))
      .map(({ activation, attempt, input }) => ({ activation, attempt, input }))
      .sort((a, b) => a.activation.localeCompare(b.activation)),
  };
}

/** One commit of the property: what it opens, closes, sets, clears, schedules and cancels. */
interface Op {
  readonly open: string[];
  readonly close: string[];
  readonly set: string[];
  readonly clear: string[];
  readonly schedule: string[];
  readonly cancel: string[];
  readonly snapshot: boolean;
}

describePg('PostgresStore: a group of commits in one statement', () => {
  it('appends every event in order and moves the head to the last; the snapshot lands at the seq it was taken', async () => {
    const store = open();
    await store.createRun(newRun('r1'));
    await store.commit('r1', step(1));
    await store.commitAll('r1', [
      step(2, { trace: '[{"n":2}]' }),
      step(3, { snapshot: '{"at":3}' }),
      step(4, { status: 'failed', error: '{"code":"NODE_FAILED"}' }),
    ]);
    const rows = await rowsOf(store, 'r1');
    expect(rows.run).toEqual({
      seq: 4,
      status: 'failed',
      error: '{"code":"NODE_FAILED"}',
      updatedAt: 1_004,
    });
    expect(rows.events.map((e) => [e.seq, e.at, e.trace])).toEqual([
      [1, 1_001, null],
      [2, 1_002, '[{"n":2}]'],
      [3, 1_003, null],
      [4, 1_004, null],
    ]);
    expect(rows.snapshot).toEqual({ seq: 3, data: '{"at":3}' });
  });

  it('a wait opened in the group and closed later in it is opened closed, at the time of the commit that closed it', async () => {
    const store = open();
    await store.createRun(newRun('r1'));
    await store.commit('r1', step(1, { waits: { open: [wait('r1', 'before', 1)] } }));
    await store.commitAll('r1', [
      step(2, { waits: { open: [wait('r1', 'q1', 2)] } }),
      step(3, { waits: { close: ['q1'] } }),
      step(4, { waits: { close: ['before'] } }),
    ]);
    expect(await store.listWaits('r1')).toMatchObject([
      { requestId: 'before', closedAt: 1_004 },
      { requestId: 'q1', openedAt: 2, closedAt: 1_003 },
    ]);
  });

  it('a timer or task set after it was cleared is set; one cleared after it was set is cleared', async () => {
    const store = open();
    await store.createRun(newRun('r1'));
    await store.commit('r1', step(1, { schedule: { tasks: [task('r1', 'old')] } }));
    await store.commitAll('r1', [
      step(2, {
        timers: {
          set: [
            { runId: 'r1', id: 'kept', at: 5 },
            { runId: 'r1', id: 'gone', at: 6 },
          ],
        },
        schedule: { tasks: [task('r1', 'gone')], cancel: ['old'] },
      }),
      step(3, {
        timers: { clear: ['gone', 'kept'] },
        schedule: { cancel: ['gone'] },
      }),
      step(4, {
        timers: { set: [{ runId: 'r1', id: 'kept', at: 7 }] },
        schedule: { tasks: [task('r1', 'old', 2)] },
      }),
    ]);
    expect(await store.listTimers('r1')).toEqual([{ runId: 'r1', id: 'kept', at: 7 }]);
    expect((await store.listTasks('r1')).map((t) => [t.activation, t.attempt])).toEqual([
      ['old', 2],
    ]);
  });

  it('takes the inbox items every commit of the group folded', async () => {
    const store = open();
    await store.createRun(newRun('r1'));
    await store.wake('r1', 1);
    await store.wake('r1', 2);
    await store.wake('r1', 3);
    const [a, b] = await store.inbox('r1');
    await store.commitAll('r1', [
      step(1, { schedule: { consumed: [a!.id] } }),
      step(2, { schedule: { consumed: [b!.id] } }),
    ]);
    expect((await store.inbox('r1')).map((i) => i.at)).toEqual([3]);
  });

  it('all or none: a stale first seq is STORE_CONFLICT, a lost epoch LEASE_LOST, seqs out of order refused, and nothing is written', async () => {
    const store = open();
    await store.createRun(newRun('r1'));
    const lease = await store.acquire('r1', { owner: 'me', leaseMs: 60_000 });
    await store.commit('r1', step(1, { epoch: lease.epoch }));
    const before = await rowsOf(store, 'r1');
    const group = (first: number, extra: Partial<Commit> = {}) =>
      [first, first + 1].map((seq) =>
        step(seq, { epoch: lease.epoch, waits: { open: [wait('r1', `q${seq}`, seq)] }, ...extra }),
      );
    await expect(store.commitAll('r1', group(1))).rejects.toMatchObject({
      code: 'STORE_CONFLICT',
    });
    await expect(store.commitAll('r1', group(2, { epoch: lease.epoch + 1 }))).rejects.toMatchObject(
      { code: 'LEASE_LOST' },
    );
    await expect(store.commitAll('r1', [step(2), step(4)])).rejects.toMatchObject({
      code: 'STORE_CONFLICT',
    });
    expect(await rowsOf(store, 'r1')).toEqual(before);
    await store.commitAll('r1', group(2));
    expect((await store.getRun('r1'))?.seq).toBe(3);
  });

  it('gives the lease up with the group when its last commit says so', async () => {
    const store = open();
    await store.createRun(newRun('r1'));
    const lease = await store.acquire('r1', { owner: 'me', leaseMs: 60_000 });
    await store.commitAll('r1', [
      step(1, { epoch: lease.epoch }),
      step(2, { epoch: lease.epoch, release: true }),
    ]);
    // Released: another owner takes the run at once, at the next epoch.
    const next = await store.acquire('r1', { owner: 'other', leaseMs: 60_000 });
    expect(next.epoch).toBe(lease.epoch + 1);
  });

  it('any group leaves the rows its commits leave one by one (waits, timers, tasks, events, snapshot)', async () => {
    const store = open();
    const ids = ['a', 'b', 'c'];
    const op = fc.record({
      open: fc.subarray(ids),
      close: fc.subarray(ids),
      set: fc.subarray(ids),
      clear: fc.subarray(ids),
      schedule: fc.subarray(ids),
      cancel: fc.subarray(ids),
      snapshot: fc.boolean(),
    });
    let n = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(op, { maxLength: 3 }),
        fc.array(op, { minLength: 2, maxLength: 6 }),
        async (prefix, group) => {
          n++;
          const [one, all] = [`one${n}`, `all${n}`];
          const commitOf = (runId: string, seq: number, o: Op) =>
            step(seq, {
              // One time for every commit: a wait from before the group that the group closes is
              // stamped with the group's last time, which one-by-one commits would not share.
              at: 5_000,
              snapshot: o.snapshot ? `{"seq":${seq}}` : null,
              waits: { open: o.open.map((id) => wait(runId, id, seq)), close: o.close },
              timers: { set: o.set.map((id) => ({ runId, id, at: seq })), clear: o.clear },
              schedule: { tasks: o.schedule.map((id) => task(runId, id, seq)), cancel: o.cancel },
            });
          for (const runId of [one, all]) {
            await store.createRun(newRun(runId));
            for (const [i, o] of prefix.entries())
              await store.commit(runId, commitOf(runId, i + 1, o));
          }
          const first = prefix.length + 1;
          for (const [i, o] of group.entries())
            await store.commit(one, commitOf(one, first + i, o));
          await store.commitAll(
            all,
            group.map((o, i) => commitOf(all, first + i, o)),
          );
          const [a, b] = [await rowsOf(store, one), await rowsOf(store, all)];
          const named = (rows: typeof a, runId: string) =>
            JSON.parse(JSON.stringify(rows).replaceAll(`"${runId}"`, '"R"'));
          expect(named(b, all)).toEqual(named(a, one));
        },
      ),
      { numRuns: 60, seed: 20261201 },
    );
  });
});

// A worker's runs that stepped together commit in one statement (`commitRuns`), each run fenced
// on its own; its RunCommitter sends them there and tells a run that did not hold why.
describePg('PostgresStore: plain groups of many runs in one statement', () => {
  /** A held run's last commits: its start and its node, the run done, its lease given up. */
  async function heldGroup(store: PostgresStore, runId: string): Promise<Commit[]> {
    await store.createRun(newRun(runId));
    await store.wake(runId, 1);
    const [woken] = await store.inbox(runId);
    const { epoch } = await store.acquire(runId, { owner: 'w', leaseMs: 60_000 });
    return [
      step(1, { epoch, trace: '[{"n":1}]' }),
      step(2, {
        epoch,
        status: 'succeeded',
        snapshot: '{"done":true}',
        release: true,
        schedule: { consumed: [woken!.id] },
      }),
    ];
  }

  it('leaves each run exactly as commitAll of its group would', async () => {
    const store = open();
    const chain = () => [step(1), step(2, { snapshot: '{"at":2}' }), step(3)];
    for (const id of ['one-a', 'all-a']) await store.createRun(newRun(id));
    const [heldOne, heldAll] = [await heldGroup(store, 'one-b'), await heldGroup(store, 'all-b')];
    await store.commitAll('one-a', chain());
    await store.commitAll('one-b', heldOne);
    expect(
      await store.commitRuns([
        { runId: 'all-a', commits: chain() },
        { runId: 'all-b', commits: heldAll },
      ]),
    ).toEqual([true, true]);
    const named = async (runId: string) =>
      JSON.parse(JSON.stringify(await rowsOf(store, runId)).replaceAll(`"${runId}"`, '"R"'));
    expect(await named('all-a')).toEqual(await named('one-a'));
    expect(await named('all-b')).toEqual(await named('one-b'));
    expect((await store.getRun('all-b'))?.lease?.live).toBe(false);
    expect(await store.inbox('all-b')).toEqual([]);
  });

  it('fences each run on its own: one at a stale seq or under a lost lease writes nothing, the rest land', async () => {
    const store = open();
    for (const id of ['fine', 'stale', 'taken']) await store.createRun(newRun(id));
    const lease = await store.acquire('taken', { owner: 'w', leaseMs: 60_000 });
    const before = { stale: await rowsOf(store, 'stale'), taken: await rowsOf(store, 'taken') };
    expect(
      await store.commitRuns([
        { runId: 'fine', commits: [step(1), step(2)] },
        { runId: 'stale', commits: [step(2), step(3)] },
        { runId: 'taken', commits: [step(1, { epoch: lease.epoch + 1 })] },
      ]),
    ).toEqual([true, false, false]);
    expect((await store.getRun('fine'))?.seq).toBe(2);
    expect(await rowsOf(store, 'stale')).toEqual(before.stale);
    expect(await rowsOf(store, 'taken')).toEqual(before.taken);
  });

  it('takes plain groups only: waits, timers or tasks go through commitAll', async () => {
    const store = open();
    await store.createRun(newRun('r1'));
    for (const extra of [
      { waits: { open: [wait('r1', 'q', 1)] } },
      { timers: { set: [{ runId: 'r1', id: 't', at: 5 }] } },
      { schedule: { tasks: [task('r1', 'work')] } },
      { schedule: { cancel: ['work'] } },
    ]) {
      await expect(
        store.commitRuns([{ runId: 'r1', commits: [step(1, extra)] }]),
      ).rejects.toMatchObject({ code: 'STORE_CONFLICT' });
    }
    expect((await store.getRun('r1'))?.seq).toBe(0);
  });

  it("a worker's committer sends the runs asked for together in one statement, and tells one that did not hold why", async () => {
    const store = open();
    for (const id of ['a', 'b', 'stale', 'taken']) await store.createRun(newRun(id));
    await store.commit('stale', step(1));
    const lease = await store.acquire('taken', { owner: 'w', leaseMs: 60_000 });
    const batches = vi.spyOn(store, 'commitRuns');
    const committer = new RunCommitter(store);
    const results = await Promise.allSettled([
      committer.commitAll('a', [step(1)]),
      committer.commitAll('b', [step(1), step(2)]),
      committer.commitAll('stale', [step(1)]),
      committer.commitAll('taken', [step(1, { epoch: lease.epoch + 1 })]),
    ]);
    expect(batches).toHaveBeenCalledTimes(1);
    expect(batches.mock.calls[0]![0].map((g) => g.runId)).toEqual(['a', 'b', 'stale', 'taken']);
    expect(results.map((r) => r.status)).toEqual([
      'fulfilled',
      'fulfilled',
      'rejected',
      'rejected',
    ]);
    expect((results[2] as PromiseRejectedResult).reason).toMatchObject({ code: 'STORE_CONFLICT' });
    expect((results[3] as PromiseRejectedResult).reason).toMatchObject({ code: 'LEASE_LOST' });
    expect((await store.getRun('b'))?.seq).toBe(2);
    // What is not plain goes to commitAll at once, alone.
    await committer.commitAll('a', [
      step(2, { timers: { set: [{ runId: 'a', id: 't', at: 9 }] } }),
    ]);
    expect(batches).toHaveBeenCalledTimes(1);
    expect(await store.listTimers('a')).toEqual([{ runId: 'a', id: 't', at: 9 }]);
  });
});
