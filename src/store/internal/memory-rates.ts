// The memory store's rate limits (rates.ts): each resource's admissions and block, in this
// process. Every call runs to its end without an await, so one admission is decided at a time,
// as SQLite's write lock and PostgreSQL's advisory lock make it there.

import {
  RATE_HOLD_MS,
  type RateDecision,
  type RateRequest,
  type RateStore,
  type RateWindow,
} from '../rates.js';
import { decideRate, type RateRow } from './rate-rows.js';

/**
 * A memory store's rate-limited resources.
 *
 * @example
 * const rates = new MemoryRates();
 * await rates.admitRate({ resource: 'openai', id: 'r1/a#1', at: Date.now(), requestsPerMinute: 60 });
 */
export class MemoryRates implements RateStore {
  /** Admissions by resource, then by id. */
  readonly #admissions = new Map<string, Map<string, RateRow>>();
  readonly #blocks = new Map<string, number>();

  async admitRate(asked: RateRequest): Promise<RateDecision> {
    // Nothing waits for a lock here, but the time is read the way every store reads it.
    const request = { ...asked, at: asked.now?.() ?? asked.at };
    const rows = this.#admissions.get(request.resource) ?? new Map<string, RateRow>();
    for (const [id, row] of rows) if (row.at <= request.at - RATE_HOLD_MS) rows.delete(id);
    const { decision, record } = decideRate(
      request,
      [...rows.values()],
      this.#blockedAt(request.resource, request.at),
    );
    if (record) {
      const { id, at } = request;
      rows.set(id, { id, at, tokens: request.reserveTokens ?? 0 });
    }
    if (rows.size > 0) this.#admissions.set(request.resource, rows);
    else this.#admissions.delete(request.resource);
    return decision;
  }

  async settleRate(resource: string, id: string, tokens: number): Promise<void> {
    const rows = this.#admissions.get(resource);
    const row = rows?.get(id);
    if (row !== undefined) rows!.set(id, { ...row, tokens });
  }

  async blockRate(resource: string, until: number): Promise<void> {
    this.#blocks.set(resource, Math.max(this.#blocks.get(resource) ?? until, until));
  }

  async rateWindow(resource: string, at: number): Promise<RateWindow> {
    const rows = [...(this.#admissions.get(resource)?.values() ?? [])].filter(
      (row) => row.at > at - RATE_HOLD_MS,
    );
    const blockedUntil = this.#blockedAt(resource, at);
    return {
      resource,
      requests: rows.length,
      tokens: rows.reduce((sum, row) => sum + row.tokens, 0),
      ...(blockedUntil !== undefined && { blockedUntil }),
    };
  }

  /** The resource's block, if it lasts past `at`. */
  #blockedAt(resource: string, at: number): number | undefined {
    const until = this.#blocks.get(resource);
    return until !== undefined && until > at ? until : undefined;
  }
}
