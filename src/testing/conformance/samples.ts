import type { Commit, MemoRecord, NewRun, Store, WaitRecord } from '../../store/store.js';

// The rows the store conformance suite writes: sample runs, commits, waits and memos.

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

/** Short names the suite's sections use. */
export const newRun = sampleRun;
export const step = sampleCommit;

/** An open wait of a run, as `openWait` takes it. */
export function wait(runId: string, requestId: string, openedAt = 2_000): WaitRecord {
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

/** A memo of the search node, as `putMemo` takes it; `overrides` change any field. */
export function memo(overrides: Partial<MemoRecord> = {}): MemoRecord {
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
