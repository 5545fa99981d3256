/**
 * Rate limits on shared resources in the store: a node's `rateLimit: { resource,
 * requestsPerMinute, tokensPerMinute }` admits each attempt through the store before its body
 * runs, so every process and worker sharing the store counts against one window per resource.
 * The window slides: what counts is what was admitted in the minute before `at` (and a
 * quarter of a second: RATE_HOLD_MS). Each
 * admission is a row (its id, when, and its tokens: a reservation until the attempt settles
 * them with what it recorded); a provider's 429 with `Retry-After` blocks the resource until
 * then. Every admission is decided in one transaction, under a lock per resource (PostgreSQL's
 * advisory lock, SQLite's write lock), so two workers never both take the last request.
 */

import type { Store } from './store.js';

/** The length of a rate limit's window: a minute, as providers state their quotas. */
export const RATE_WINDOW_MS = 60_000;

/**
 * How long an admission holds its place: the window and a quarter of a second. The call an
 * admission lets through starts a few ms after it is recorded (the commit's round trip, the
 * body's start), and not always the same few: held for exactly a minute, a call admitted as
 * the oldest left could start less than a minute after it, seen as 1 of 60 over the limit by
 * bench/time.ts rate. The margin costs a sustained quota 0.4% of its throughput.
 */
export const RATE_HOLD_MS = RATE_WINDOW_MS + 250;

/** One admission asked of the store: an attempt about to call `resource`. */
export interface RateRequest {
  readonly resource: string;
  /**
   * Stable per attempt (`runId/activation#attempt`): asking again under an id already admitted
   * (a host that died and runs the attempt again) admits it again without counting it twice.
   */
  readonly id: string;
  /** Now, by the asking host's clock (ms since the epoch). */
  readonly at: number;
  /**
   * The asking host's clock, read again once the store holds the resource's lock: the time the
   * admission is recorded at instead of `at`. Without it, requests that queued for the lock
   * together would all be stamped with the moment they asked, and the window would free their
   * successors' room as early, while the calls they admitted were made up to the lock's queue
   * later (seen as 5 of 60 over the limit by bench/time.ts rate before it was read here).
   */
  readonly now?: () => number;
  readonly requestsPerMinute?: number;
  readonly tokensPerMinute?: number;
  /** Tokens held for the attempt until it settles (its `maxTokens`, if it has one): 0 by default. */
  readonly reserveTokens?: number;
}

/** What the store decided: admitted, or not before `until`, and why. */
export type RateDecision =
  | { readonly admitted: true }
  | {
      readonly admitted: false;
      /** When the window will have room for it (or the block ends): ms since the epoch. */
      readonly until: number;
      readonly reason: 'requests' | 'tokens' | 'blocked';
    };

/** What a resource's window holds at `at`: admissions and tokens in the last minute, and a block. */
export interface RateWindow {
  readonly resource: string;
  readonly requests: number;
  readonly tokens: number;
  /** Until when a 429 blocks it, if it does. */
  readonly blockedUntil?: number;
}

/** The store's record of rate-limited resources. */
export interface RateStore {
  /**
   * Admits one request to `resource` if its window has room: fewer than `requestsPerMinute`
   * admissions in the minute before `at`, and its tokens plus `reserveTokens` within
   * `tokensPerMinute`; and no block. An admission is recorded in the same transaction, and
   * admissions older than the window are deleted by it.
   */
  admitRate(request: RateRequest): Promise<RateDecision>;
  /** Replaces an admission's reserved tokens with what the attempt recorded (a no-op if gone). */
  settleRate(resource: string, id: string, tokens: number): Promise<void>;
  /** Blocks `resource` until `until` (a 429's Retry-After); a later block only extends it. */
  blockRate(resource: string, until: number): Promise<void>;
  /** The resource's window at `at`. */
  rateWindow(resource: string, at: number): Promise<RateWindow>;
}

/**
 * Whether the store keeps rate limits ({@link RateStore}): memory, SQLite and PostgreSQL all do.
 *
 * @example
 * if (keepsRates(store)) console.log(await store.rateWindow('openai', Date.now()));
 */
export function keepsRates(store: Store): store is Store & RateStore {
  return typeof (store as Partial<RateStore>).admitRate === 'function';
}
