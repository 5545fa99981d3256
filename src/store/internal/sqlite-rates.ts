// Rate limits on SQLite (rates.ts): a row per admission, a row per blocked resource. An
// admission is decided in one write transaction (BEGIN IMMEDIATE: one writer at a time, in
// every process on the file), so two processes never both take a resource's last request.
// The rows belong to no run: deleting a run leaves them, and they leave the window by time.

import type Database from 'better-sqlite3';
import {
  RATE_HOLD_MS,
  type RateDecision,
  type RateRequest,
  type RateStore,
  type RateWindow,
} from '../rates.js';
import { decideRate, type RateRow } from './rate-rows.js';

/**
 * The migration that makes the tables: appended to schema.ts's list. IF NOT EXISTS: a file whose
 * recorded version was set back below it (sqlite-claim.test.ts does) migrates again.
 */
export const ratesMigration = `
  CREATE TABLE IF NOT EXISTS rate_admissions (
    resource TEXT NOT NULL,
    id TEXT NOT NULL,
    at INTEGER NOT NULL,
    tokens INTEGER NOT NULL,
    PRIMARY KEY (resource, id)
  );
  CREATE INDEX IF NOT EXISTS rate_admissions_by_at ON rate_admissions (resource, at);
  CREATE TABLE IF NOT EXISTS rate_blocks (
    resource TEXT NOT NULL PRIMARY KEY,
    until INTEGER NOT NULL
  );
`;

const sql = {
  sweep: 'DELETE FROM rate_admissions WHERE resource = ? AND at <= ?',
  window: 'SELECT id, at, tokens FROM rate_admissions WHERE resource = ? AND at > ?',
  blocked: 'SELECT until FROM rate_blocks WHERE resource = ? AND until > ?',
  admit: 'INSERT INTO rate_admissions (resource, id, at, tokens) VALUES (?, ?, ?, ?)',
  settle: 'UPDATE rate_admissions SET tokens = ? WHERE resource = ? AND id = ?',
  block: `INSERT INTO rate_blocks (resource, until) VALUES (?, ?)
    ON CONFLICT (resource) DO UPDATE SET until = max(until, excluded.until)`,
  count: `SELECT count(*) AS requests, coalesce(sum(tokens), 0) AS tokens
    FROM rate_admissions WHERE resource = ? AND at > ?`,
} as const;

type Statements = { readonly [K in keyof typeof sql]: Database.Statement };

/** What the rates borrow from their store: its transactions, with their busy handling. */
export interface RateHost {
  write<T>(fn: () => T): T;
  read<T>(fn: () => T): T;
}

/**
 * A SQLite store's rate-limited resources.
 *
 * @example
 * const rates = new SqliteRates(db, { write, read });
 * await rates.admitRate({ resource: 'openai', id: 'r1/a#1', at: Date.now(), requestsPerMinute: 60 });
 */
export class SqliteRates implements RateStore {
  readonly #sql: Statements;
  readonly #host: RateHost;

  constructor(db: Database.Database, host: RateHost) {
    this.#sql = Object.fromEntries(
      Object.entries(sql).map(([name, text]) => [name, db.prepare(text)]),
    ) as unknown as Statements;
    this.#host = host;
  }

  async admitRate(request: RateRequest): Promise<RateDecision> {
    const { resource, id } = request;
    return this.#host.write(() => {
      // Read inside the write lock: see RateRequest.now.
      const at = request.now?.() ?? request.at;
      this.#sql.sweep.run(resource, at - RATE_HOLD_MS);
      const rows = this.#sql.window.all(resource, at - RATE_HOLD_MS) as RateRow[];
      const { decision, record } = decideRate(
        { ...request, at },
        rows,
        this.#blockedAt(resource, at),
      );
      if (record) this.#sql.admit.run(resource, id, at, request.reserveTokens ?? 0);
      return decision;
    });
  }

  async settleRate(resource: string, id: string, tokens: number): Promise<void> {
    this.#host.write(() => this.#sql.settle.run(tokens, resource, id));
  }

  async blockRate(resource: string, until: number): Promise<void> {
    this.#host.write(() => this.#sql.block.run(resource, until));
  }

  async rateWindow(resource: string, at: number): Promise<RateWindow> {
    return this.#host.read(() => {
      const counted = this.#sql.count.get(resource, at - RATE_HOLD_MS) as {
        requests: number;
        tokens: number;
      };
      const blockedUntil = this.#blockedAt(resource, at);
      return {
        resource,
        requests: counted.requests,
        tokens: counted.tokens,
        ...(blockedUntil !== undefined && { blockedUntil }),
      };
    });
  }

  #blockedAt(resource: string, at: number): number | undefined {
    const row = this.#sql.blocked.get(resource, at) as { until: number } | undefined;
    return row?.until;
  }
}
