import type {
  EventWait,
  SignalFilter,
  SignalRecord,
  SignalSent,
  SignalStore,
} from '../signal-store.js';
import type { WaitRecord } from '../store.js';
import { signalMatches, signalState } from './signal-match.js';

/** What the memory store lends its signals: its waits, and an answer with its wake-up. */
export interface MemoryWaits {
  wait(runId: string, requestId: string): WaitRecord | undefined;
  answer(runId: string, requestId: string, answer: string, by: string, at: number): void;
  now(): number;
}

/**
 * The memory store's signals. Every method runs to its end before it awaits anything, so a
 * delivery (answer, consumption, wake-up) is as atomic as a transaction elsewhere.
 *
 * @example
 * const signals = new MemorySignals({ wait, answer, now });
 */
export class MemorySignals implements SignalStore {
  readonly #waits: MemoryWaits;
  readonly #signals = new Map<string, SignalRecord>();
  /** Open event waits that asked for a signal, by `runId requestId`, in the order they asked. */
  readonly #listening = new Map<string, EventWait>();

  constructor(waits: MemoryWaits) {
    this.#waits = waits;
  }

  async sendSignal(signal: SignalRecord): Promise<SignalSent> {
    const standing = this.#signals.get(signal.id);
    if (standing !== undefined) return { outcome: 'duplicate', signal: standing };
    this.#signals.set(signal.id, signal);
    const delivered = this.#toListener(signal.id, signal.sentAt);
    return delivered === undefined
      ? { outcome: 'kept', signal }
      : { outcome: 'delivered', signal: delivered };
  }

  async matchSignal(wait: EventWait, at: number): Promise<SignalRecord | undefined> {
    if (!this.#open(wait)) return undefined;
    const id = `${wait.runId} ${wait.requestId}`;
    this.#listening.set(id, wait);
    const kept = [...this.#signals.values()]
      .filter((s) => signalState(s, at) === 'kept' && signalMatches(s, wait))
      .sort((a, b) => a.sentAt - b.sentAt || (a.id < b.id ? -1 : 1))[0];
    return kept === undefined ? undefined : this.#deliver(kept, wait, at);
  }

  /** Drops what a deleted run owned: the signals sent to it or taken by it, its event waits. */
  forget(runId: string): void {
    for (const [id, s] of this.#signals)
      if (s.runId === runId || s.consumedRun === runId) this.#signals.delete(id);
    for (const [key, wait] of this.#listening)
      if (wait.runId === runId) this.#listening.delete(key);
  }

  async redeliverSignal(id: string, at: number): Promise<SignalRecord | undefined> {
    return this.#toListener(id, at);
  }

  async listSignals(filter: SignalFilter = {}): Promise<SignalRecord[]> {
    const at = filter.at ?? this.#waits.now();
    return [...this.#signals.values()]
      .filter(
        (s) =>
          (filter.state === undefined || signalState(s, at) === filter.state) &&
          (filter.graph === undefined || s.graph === filter.graph) &&
          (filter.runId === undefined || s.runId === filter.runId),
      )
      .sort((a, b) => a.sentAt - b.sentAt || (a.id < b.id ? -1 : 1));
  }

  async expireSignals(at: number): Promise<number> {
    let gone = 0;
    for (const s of this.#signals.values()) {
      if (signalState(s, at) !== 'expired') continue;
      this.#signals.delete(s.id);
      gone++;
    }
    return gone;
  }

  /** Delivers a kept signal to the first open wait listening for it, if there is one. */
  #toListener(id: string, at: number): SignalRecord | undefined {
    const signal = this.#signals.get(id);
    if (signal === undefined || signalState(signal, at) !== 'kept') return undefined;
    for (const [key, wait] of this.#listening) {
      if (!this.#open(wait)) {
        this.#listening.delete(key);
        continue;
      }
      if (signalMatches(signal, wait)) return this.#deliver(signal, wait, at);
    }
    return undefined;
  }

  #deliver(signal: SignalRecord, wait: EventWait, at: number): SignalRecord {
    this.#waits.answer(wait.runId, wait.requestId, signal.payload, `signal:${signal.id}`, at);
    this.#listening.delete(`${wait.runId} ${wait.requestId}`);
    const consumed = {
      ...signal,
      consumedRun: wait.runId,
      consumedWait: wait.requestId,
      consumedAt: at,
    };
    this.#signals.set(signal.id, consumed);
    return consumed;
  }

  #open(wait: EventWait): boolean {
    const record = this.#waits.wait(wait.runId, wait.requestId);
    return record !== undefined && record.answer === null && !record.closedAt;
  }
}
