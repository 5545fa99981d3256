/**
 * Concurrency limits in the store: at most `concurrency` runs of a graph with one key are
 * running at once, however many processes share the store. The store keeps one row per limited
 * run, in one of three states: `active` (it holds one of its key's slots), `queued` (it waits for
 * one, in order) or `idle` (it waits for something else, or has stopped: no slot). Every change
 * happens in the transaction that causes it:
 * - `createRun`/`createRuns` of a run with a `limit` admit it: with a slot free and nobody of its
 *   key queued before it, it is recorded as given, `active`; otherwise it is recorded `waiting`
 *   (whatever status it was given), `queued`.
 * - A commit that leaves the run not `running` (it waits, or stopped) frees its slot, and the
 *   oldest queued runs of its key take the slots free, each with a wake-up in its inbox (whoever
 *   folds it starts it). A commit that makes it `running` again (an answer) makes it `active`.
 */

import type { Store } from './store.js';

/** What a new run is limited by: `NewRun.limit`. */
export interface RunLimit {
  readonly key: string;
  readonly concurrency: number;
}

/** A limited run's row: its key, and whether it holds a slot, waits for one, or neither. */
export interface RunLimitRecord {
  readonly runId: string;
  readonly graph: string;
  readonly key: string;
  readonly concurrency: number;
  readonly state: 'active' | 'queued' | 'idle';
  /** When it entered this state (ms since the epoch). */
  readonly since: number;
}

/** Which queued runs `listQueued` returns, oldest first. */
export interface QueuedFilter {
  readonly graph?: string;
  readonly key?: string;
  readonly limit?: number;
}

/** The store's record of limited runs. */
export interface LimitStore {
  /** The run's limit row; undefined for a run created without a limit. */
  runLimit(runId: string): Promise<RunLimitRecord | undefined>;
  /** The runs queued for a slot, oldest first: the order they start in. */
  listQueued(filter?: QueuedFilter): Promise<RunLimitRecord[]>;
  /** How many runs of the graph with this key hold a slot. */
  activeCount(graph: string, key: string): Promise<number>;
}

/**
 * Whether the store keeps concurrency limits ({@link LimitStore}): memory, SQLite and
 * PostgreSQL all do.
 *
 * @example
 * if (keepsLimits(store)) console.log(await store.listQueued());
 */
export function keepsLimits(store: Store): store is Store & LimitStore {
  const limits = store as Partial<LimitStore>;
  return typeof limits.runLimit === 'function' && typeof limits.listQueued === 'function';
}
