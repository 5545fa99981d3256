import type { Store } from './store.js';

/**
 * A signal as the store keeps it: sent to a run, or to whichever run of a graph waits under a
 * key; kept until an event wait of that name takes it, or until it expires. Times are ms since
 * the epoch.
 */
export interface SignalRecord {
  /** Unique in the store: a second signal with the same id is a duplicate, and a no-op. */
  readonly id: string;
  readonly graph: string;
  /** The run it was sent to; null for a `{ graph, key }` signal. */
  readonly runId: string | null;
  /** The key it was sent under; null for a signal sent to a run. */
  readonly key: string | null;
  readonly name: string;
  /** JSON of the payload, as validated. */
  readonly payload: string;
  readonly sentAt: number;
  /** Unconsumed past this time, it is never delivered, and `expireSignals` deletes it. */
  readonly expiresAt: number;
  /** The run and wait that took it, and when; null while it is kept. */
  readonly consumedRun: string | null;
  readonly consumedWait: string | null;
  readonly consumedAt: number | null;
}

/** An event wait that is open, as a signal finds it: its run, its request, what it takes. */
export interface EventWait {
  readonly runId: string;
  readonly requestId: string;
  readonly graph: string;
  readonly name: string;
  readonly key: string | null;
}

/** What `sendSignal` did: delivered to an open wait, kept for later, or nothing (a duplicate). */
export interface SignalSent {
  readonly outcome: 'delivered' | 'kept' | 'duplicate';
  /** The signal that stands under the id: for a duplicate, the first one. */
  readonly signal: SignalRecord;
}

/** Which signals `listSignals` returns, oldest first. */
export interface SignalFilter {
  /** `kept`: unconsumed and not expired at `at`; `consumed`; `expired`: unconsumed, past it. */
  readonly state?: 'kept' | 'consumed' | 'expired';
  readonly graph?: string;
  readonly runId?: string;
  /** The time `kept` and `expired` are judged at (default: the store's now). */
  readonly at?: number;
}

/**
 * Signals for event waits. A delivery is one transaction: the wait's answer (the payload, by
 * `signal:<id>`), the signal's consumption and the run's wake-up (inbox) land together or not
 * at all; a wait takes one signal, a signal goes to one wait.
 */
export interface SignalStore {
  /**
   * Records the signal unless one with its id exists (then `duplicate`, nothing written), and
   * delivers it at once to an open event wait it matches (`delivered`), else keeps it.
   */
  sendSignal(signal: SignalRecord): Promise<SignalSent>;
  /**
   * Registers an open event wait for signals to find, and delivers to it the oldest kept
   * signal it matches (to its run, or to its graph under its key), if there is one.
   */
  matchSignal(wait: EventWait, at: number): Promise<SignalRecord | undefined>;
  /** Delivers a kept signal to an open event wait it matches, if one is registered. */
  redeliverSignal(id: string, at: number): Promise<SignalRecord | undefined>;
  listSignals(filter?: SignalFilter): Promise<SignalRecord[]>;
  /** Deletes the unconsumed signals expired at `at`; resolves with how many. */
  expireSignals(at: number): Promise<number>;
}

/** Whether the store keeps signals ({@link SignalStore}). */
export function keepsSignals(store: Store): store is Store & SignalStore {
  return typeof (store as Partial<SignalStore>).sendSignal === 'function';
}
