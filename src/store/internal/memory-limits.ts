// The memory store's concurrency limits (limits.ts): one row per limited run, in this process.
// The rules are those of SQLite's and PostgreSQL's triggers (sqlite-limits.ts, pg-limits-sql.ts).

import type { QueuedFilter, RunLimit, RunLimitRecord } from '../limits.js';
import type { StoredStatus } from '../store.js';

interface LimitRow {
  record: RunLimitRecord;
  /** Queue order: when it was created, in arrival order. */
  readonly order: number;
}

export class MemoryLimits {
  readonly #rows = new Map<string, LimitRow>();
  #next = 1;

  /** The status a new run is recorded with: as given, or `waiting` when it is queued. */
  admit(runId: string, graph: string, limit: RunLimit, status: StoredStatus, at: number) {
    const rows = this.#ofKey(graph, limit.key);
    const active = rows.filter((r) => r.record.state === 'active').length;
    const free = active < limit.concurrency && !rows.some((r) => r.record.state === 'queued');
    const state = free ? 'active' : 'queued';
    const { key, concurrency } = limit;
    const record: RunLimitRecord = { runId, graph, key, concurrency, state, since: at };
    this.#rows.set(runId, { record, order: this.#next++ });
    return free ? status : 'waiting';
  }

  /**
   * Follows a run's new status: running takes a slot, anything else frees one. Returns the runs
   * that took the slots freed, to be woken.
   */
  follow(runId: string, status: StoredStatus, at: number): string[] {
    const row = this.#rows.get(runId);
    if (row === undefined) return [];
    const { state } = row.record;
    if (status === 'running') {
      if (state !== 'active') row.record = { ...row.record, state: 'active', since: at };
      return [];
    }
    // A queued run stays queued while it waits; it leaves the queue only when it stops.
    if (state === 'queued' && status !== 'waiting')
      row.record = { ...row.record, state: 'idle', since: at };
    if (state !== 'active') return [];
    row.record = { ...row.record, state: 'idle', since: at };
    const { graph, key, concurrency } = row.record;
    const rows = this.#ofKey(graph, key);
    let free = concurrency - rows.filter((r) => r.record.state === 'active').length;
    const woken: string[] = [];
    for (const r of rows) {
      if (free <= 0) break;
      if (r.record.state !== 'queued') continue;
      r.record = { ...r.record, state: 'active', since: at };
      woken.push(r.record.runId);
      free--;
    }
    return woken;
  }

  /** Forgets a deleted run's row: a run that can be deleted holds no slot (it is not running). */
  forget(runId: string): void {
    this.#rows.delete(runId);
  }

  get(runId: string): RunLimitRecord | undefined {
    return this.#rows.get(runId)?.record;
  }

  queued(filter: QueuedFilter): RunLimitRecord[] {
    const rows = [...this.#rows.values()]
      .filter(
        (r) =>
          r.record.state === 'queued' &&
          (filter.graph === undefined || r.record.graph === filter.graph) &&
          (filter.key === undefined || r.record.key === filter.key),
      )
      .sort((a, b) => a.order - b.order)
      .map((r) => r.record);
    return filter.limit === undefined ? rows : rows.slice(0, filter.limit);
  }

  active(graph: string, key: string): number {
    return this.#ofKey(graph, key).filter((r) => r.record.state === 'active').length;
  }

  #ofKey(graph: string, key: string): LimitRow[] {
    return [...this.#rows.values()]
      .filter((r) => r.record.graph === graph && r.record.key === key)
      .sort((a, b) => a.order - b.order);
  }
}
