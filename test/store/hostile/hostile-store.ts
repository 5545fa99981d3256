import type { LoadedRun, RunRecord, Store, StoredEvent } from '../../../src/index.js';

/** How a damaged store shows one run: each part of what it reads back, changed. */
export interface Damage {
  readonly run?: (run: RunRecord) => RunRecord;
  /** The newest snapshot's JSON (loadRun's, and snapshotAt's past seq 0). */
  readonly latest?: (data: string) => string;
  /** Every snapshot's JSON, the first one's too. */
  readonly snapshots?: (data: string) => string;
  /** The run's events, as loadRun and events() return them. */
  readonly events?: (events: readonly StoredEvent[]) => StoredEvent[];
  /** No snapshot at all: loadRun and snapshotAt have none to give. */
  readonly noSnapshot?: boolean;
  /** Read as if the newest snapshot were lost: loadRun starts from seq 0 and replays every event. */
  readonly fromFirst?: boolean;
}

/** What a damaged store was asked to write about the damaged run: it must be nothing. */
export interface Writes {
  readonly calls: string[];
}

const writing = new Set([
  'createRun',
  'commit',
  'commitAll',
  'answerWait',
  'openWait',
  'recordEffect',
  'putMemo',
]);

/**
 * A real store that reads one run back damaged, as a store with bad rows (or a user's own store
 * with a bug) would hand it to the runtime: every other run, and every write, goes to the real
 * store untouched. Writes about the damaged run are recorded, so a test can say none was made.
 */
export function damaged(
  store: Store,
  runId: string,
  damage: Damage,
): { store: Store; writes: Writes } {
  const writes: Writes = { calls: [] };
  const runOf = (run: RunRecord | undefined) =>
    run !== undefined && damage.run !== undefined ? damage.run(run) : run;
  const snapshotOf = (snapshot: { seq: number; data: string }) => {
    let data = damage.snapshots?.(snapshot.data) ?? snapshot.data;
    if (snapshot.seq > 0 && damage.latest !== undefined) data = damage.latest(data);
    return { seq: snapshot.seq, data };
  };
  const eventsOf = (events: readonly StoredEvent[]) => damage.events?.(events) ?? [...events];
  const overrides: Partial<Store> = {
    async getRun(id) {
      const run = await store.getRun(id);
      return id === runId ? runOf(run) : run;
    },
    async loadRun(id): Promise<LoadedRun | undefined> {
      if (id !== runId) return store.loadRun(id);
      const loaded = await store.loadRun(id);
      if (loaded === undefined) return undefined;
      if (damage.noSnapshot) return undefined;
      const snapshot = damage.fromFirst ? (await store.snapshotAt(id, 0))! : loaded.snapshot;
      const events = damage.fromFirst ? await store.events(id) : loaded.events;
      return { run: runOf(loaded.run)!, snapshot: snapshotOf(snapshot), events: eventsOf(events) };
    },
    async snapshotAt(id, seq) {
      const kept = await store.snapshotAt(id, seq);
      if (id !== runId || kept === undefined) return kept;
      if (damage.noSnapshot) return undefined;
      return snapshotOf(damage.fromFirst ? (await store.snapshotAt(id, 0))! : kept);
    },
    async events(id, afterSeq) {
      const events = await store.events(id, afterSeq);
      return id === runId ? eventsOf(events).filter((e) => e.seq > (afterSeq ?? 0)) : events;
    },
  };
  const proxy = new Proxy(store, {
    get(target, prop, receiver) {
      if (typeof prop === 'string' && prop in overrides) return overrides[prop as keyof Store];
      const value = Reflect.get(target, prop, receiver) as unknown;
      if (typeof value !== 'function') return value;
      if (typeof prop === 'string' && writing.has(prop))
        return (...args: unknown[]) => {
          const first = args[0] as { id?: string; runId?: string } | string;
          const about = typeof first === 'string' ? first : (first?.runId ?? first?.id);
          if (about === runId) writes.calls.push(prop);
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      return (value as (...a: unknown[]) => unknown).bind(target);
    },
  });
  return { store: proxy, writes };
}
