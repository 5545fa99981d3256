import type { EffectRecord, RunRecord, Store, StoredEvent, WaitRecord } from '../../store/store.js';

/** A kept snapshot of a run: its seq and its JSON. */
export interface KeptSnapshot {
  readonly seq: number;
  readonly data: string;
}

/** Everything a store recorded about one run, as the history checker reads it. */
export interface RecordedRun {
  readonly run: RunRecord;
  /** Every committed event, in the store's order. */
  readonly events: readonly StoredEvent[];
  /** The snapshot at seq 0 (what the run was created with) and the newest one kept. */
  readonly first: KeptSnapshot | undefined;
  readonly latest: KeptSnapshot | undefined;
  readonly waits: readonly WaitRecord[];
  readonly effects: readonly EffectRecord[];
}

/** A store's recorded history: the runs it holds, read through the public `Store` interface. */
export interface RecordedHistory {
  readonly runs: readonly RecordedRun[];
}

/**
 * Reads what the store recorded about these runs (default: every run it lists), through the
 * public `Store` interface only, so it works on any store a user wrote.
 *
 * @example
 * const recorded = await readHistory(store);
 */
export async function readHistory(
  store: Store,
  runIds?: readonly string[],
): Promise<RecordedHistory> {
  const ids = runIds ?? (await listAll(store));
  const runs: RecordedRun[] = [];
  for (const id of ids) {
    const run = await store.getRun(id);
    if (run === undefined) continue;
    const [events, first, loaded, waits, effects] = await Promise.all([
      store.events(id),
      store.snapshotAt(id, 0),
      store.snapshotAt(id, run.seq),
      store.listWaits(id),
      store.listEffects(id),
    ]);
    runs.push({ run, events, first, latest: loaded, waits, effects });
  }
  return { runs };
}

/** Every run id the store lists, a page at a time. */
export async function listAll(store: Store): Promise<string[]> {
  const ids: string[] = [];
  let before: { createdAt: number; id: string } | undefined;
  for (;;) {
    const page = await store.listRuns({ limit: 500, ...(before && { before }) });
    ids.push(...page.map((r) => r.id));
    if (page.length < 500) return ids;
    const last = page.at(-1)!;
    before = { createdAt: last.createdAt, id: last.id };
  }
}
