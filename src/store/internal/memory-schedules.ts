import type {
  NewSchedule,
  ScheduleRecord,
  ScheduleState,
  ScheduleStore,
} from '../schedule-store.js';

/** The schedules of a `MemoryStore`, by the store's clock. */
export class MemorySchedules implements ScheduleStore {
  readonly #rows = new Map<string, ScheduleRecord>();
  readonly #now: () => number;

  constructor(now: () => number) {
    this.#now = now;
  }

  async putSchedule(schedule: NewSchedule): Promise<ScheduleRecord> {
    const now = this.#now();
    const before = this.#rows.get(schedule.id);
    const row: ScheduleRecord = {
      paused: false,
      bufferedAt: null,
      lastTickAt: null,
      lastRunId: null,
      createdAt: now,
      ...before,
      ...schedule,
      revision: (before?.revision ?? 0) + 1,
      updatedAt: now,
    };
    this.#rows.set(row.id, row);
    return row;
  }

  async getSchedule(id: string): Promise<ScheduleRecord | undefined> {
    return this.#rows.get(id);
  }

  async listSchedules(graphs?: readonly string[]): Promise<ScheduleRecord[]> {
    return [...this.#rows.values()]
      .filter((s) => graphs === undefined || graphs.includes(s.graph))
      .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  async changeSchedule(
    id: string,
    revision: number,
    state: ScheduleState,
  ): Promise<ScheduleRecord | undefined> {
    const row = this.#rows.get(id);
    if (row === undefined || row.revision !== revision) return undefined;
    const next = { ...row, ...state, revision: revision + 1, updatedAt: this.#now() };
    this.#rows.set(id, next);
    return next;
  }

  async removeSchedule(id: string): Promise<boolean> {
    return this.#rows.delete(id);
  }

  async dueSchedules(
    graphs: readonly string[],
    at: number,
    limit?: number,
  ): Promise<ScheduleRecord[]> {
    const due = [...this.#rows.values()]
      .filter(
        (s) =>
          !s.paused &&
          graphs.includes(s.graph) &&
          (s.bufferedAt !== null || (s.nextAt !== null && s.nextAt <= at)),
      )
      .sort((a, b) => dueOf(a) - dueOf(b) || (a.id < b.id ? -1 : 1));
    return limit === undefined ? due : due.slice(0, Math.max(0, limit));
  }

  async nextScheduleAt(graphs: readonly string[], after: number): Promise<number | undefined> {
    let next: number | undefined;
    for (const s of this.#rows.values()) {
      if (s.paused || s.nextAt === null || s.nextAt <= after || !graphs.includes(s.graph)) continue;
      if (next === undefined || s.nextAt < next) next = s.nextAt;
    }
    return next;
  }
}

/** A buffered tick is older than any due one: it sorts first. */
function dueOf(s: ScheduleRecord): number {
  return s.bufferedAt ?? s.nextAt ?? Number.POSITIVE_INFINITY;
}
