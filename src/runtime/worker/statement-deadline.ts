import { WaymarkError } from '../../error/waymark-error.js';

// A worker stops its work a third of a lease before the lease could expire when renewals fail.
// A store statement that may run longer than that third could outlive the worker's hold on the
// work: a result written, or a renewal answered, after another worker took the work over. So a
// store whose statements have a deadline (PostgresStore's own pool) must fit it in a third.

/** A store that says how long its statements can run at most (undefined: it cannot say). */
interface BoundedStatements {
  readonly statementDeadlineMs?: number | undefined;
}

/**
 * Refuses a lease too short for the store's statement deadline.
 *
 * @throws WaymarkError `OPTIONS_INVALID`
 * @example
 * checkLeaseCoversStatements(store, 10_000); // PostgresStore defaults: 3,000 ms < 3,333 ms
 */
export function checkLeaseCoversStatements(store: object, leaseMs: number): void {
  const deadlineMs = (store as BoundedStatements).statementDeadlineMs;
  if (deadlineMs === undefined || deadlineMs < leaseMs / 3) return;
  throw new WaymarkError(
    'OPTIONS_INVALID',
    `a worker's leaseMs ${leaseMs} is too short for the store's statement deadline of ${deadlineMs} ms: every statement must end within a third of the lease (${Math.floor(leaseMs / 3)} ms); give a lease above ${deadlineMs * 3} ms, or lower the store's statementTimeoutMs and queryTimeoutMs`,
    { retryable: false, details: { leaseMs, statementDeadlineMs: deadlineMs } },
  );
}
