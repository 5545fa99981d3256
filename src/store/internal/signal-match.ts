import type { EventWait, SignalRecord } from '../signal-store.js';

/**
 * Whether a signal is for this wait: same graph and name, and sent to its run or under its key.
 * The SQL stores say the same in their statements.
 *
 * @example
 * signalMatches(signal, { runId: 'r1', requestId: 'r1/paid:1', graph: 'order', name: 'payment', key: 'o-7' });
 */
export function signalMatches(signal: SignalRecord, wait: EventWait): boolean {
  if (signal.graph !== wait.graph || signal.name !== wait.name) return false;
  return signal.runId !== null ? signal.runId === wait.runId : signal.key === wait.key;
}

/** Where a signal stands at `at`: kept (deliverable), consumed, or expired unconsumed. */
export function signalState(signal: SignalRecord, at: number): 'kept' | 'consumed' | 'expired' {
  if (signal.consumedAt !== null) return 'consumed';
  return signal.expiresAt > at ? 'kept' : 'expired';
}
