import type pg from 'pg';
import { WaymarkError } from '../../error/waymark-error.js';

// Deadlines on the PostgreSQL store's own connections. Without them one statement that never
// answers (a lock nobody releases, a network path that drops packets silently) blocks its
// caller until TCP gives up, about 15 minutes later; a worker whose result write hangs while
// its other connection renews the lease holds the work all that time. Each deadline fails the
// statement with STORE_UNAVAILABLE (retryable), so the caller retries or gives the work up.

/** The deadlines of the store's own pool, as `PostgresStoreOptions` may override them. */
export interface PgDeadlines {
  /** The server cancels a statement running longer (`statement_timeout`). */
  readonly statementTimeoutMs: number;
  /**
   * The client gives up on a statement with no answer after this (node-postgres
   * `query_timeout`), for when the server cannot say so: a dead network path or host. Longer
   * than `statementTimeoutMs`, so a slow statement is told by the server first.
   */
  readonly queryTimeoutMs: number;
  /** The server ends a session left idle inside a transaction (`idle_in_transaction_session_timeout`). */
  readonly idleInTransactionTimeoutMs: number;
  /** TCP keep-alive probes after this much silence, so a dead peer is noticed (0: off). */
  readonly keepAliveMs: number;
}

/** The defaults: every statement bounded below a third of a worker's default 10 s lease. */
export const defaultPgDeadlines: PgDeadlines = {
  statementTimeoutMs: 2_000,
  queryTimeoutMs: 3_000,
  idleInTransactionTimeoutMs: 10_000,
  keepAliveMs: 10_000,
};

const names = Object.keys(defaultPgDeadlines) as (keyof PgDeadlines)[];

/**
 * The deadlines for `options`: the defaults, overridden by those given. `serverSide: false`
 * (behind a transaction pooler): only the client's own are sent, so their order is not checked.
 *
 * @throws WaymarkError `OPTIONS_INVALID` for a deadline that is not a whole number > 0
 *   (`keepAliveMs` may be 0), or a `queryTimeoutMs` below `statementTimeoutMs`.
 */
export function pgDeadlines(
  options: Partial<Record<keyof PgDeadlines, unknown>>,
  serverSide = true,
): PgDeadlines {
  const chosen = { ...defaultPgDeadlines };
  for (const name of names) {
    const value = options[name];
    if (value === undefined) continue;
    const least = name === 'keepAliveMs' ? 0 : 1;
    if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < least) {
      throw new WaymarkError(
        'OPTIONS_INVALID',
        `${name} must be a whole number >= ${least}, not ${JSON.stringify(value)}`,
        { retryable: false },
      );
    }
    chosen[name] = value;
  }
  // Behind a transaction pooler the server's statement_timeout is not the store's to set.
  if (serverSide && chosen.queryTimeoutMs < chosen.statementTimeoutMs) {
    throw new WaymarkError(
      'OPTIONS_INVALID',
      `queryTimeoutMs (${chosen.queryTimeoutMs}) must not be below statementTimeoutMs (${chosen.statementTimeoutMs}): the server should cut a slow statement before the client gives up on it`,
      { retryable: false },
    );
  }
  return chosen;
}

/** The pool (and listening client) settings that carry `deadlines`. */
export function deadlineConfig(deadlines: PgDeadlines): pg.PoolConfig {
  return {
    statement_timeout: deadlines.statementTimeoutMs,
    query_timeout: deadlines.queryTimeoutMs,
    idle_in_transaction_session_timeout: deadlines.idleInTransactionTimeoutMs,
    keepAlive: deadlines.keepAliveMs > 0,
    keepAliveInitialDelayMillis: deadlines.keepAliveMs,
  };
}

/**
 * The longest a statement of `pool` can run before it fails, as its settings say: the larger
 * of its `statement_timeout` and `query_timeout`, or undefined when it has neither (a pool the
 * user gave without deadlines: theirs to bound).
 */
export function statementDeadlineOf(pool: pg.Pool): number | undefined {
  const options = (pool as unknown as { options?: pg.PoolConfig }).options ?? {};
  const bounds = [options.statement_timeout, options.query_timeout].filter(
    (ms): ms is number => typeof ms === 'number' && ms > 0,
  );
  return bounds.length === 0 ? undefined : Math.max(...bounds);
}
