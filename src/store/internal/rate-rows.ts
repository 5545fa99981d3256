import { RATE_HOLD_MS, type RateDecision, type RateRequest } from '../rates.js';

// The decision of an admission (rates.ts), one copy for every store: each store reads the
// resource's window under its lock, asks `decideRate`, and records the admission if told to.
// Testable without a database.

/** One admission in a resource's window, as a store reads it back. */
export interface RateRow {
  readonly id: string;
  readonly at: number;
  readonly tokens: number;
}

/** What a store does with a request: answer `decision`, and record the admission if `record`. */
export interface RateVerdict {
  readonly decision: RateDecision;
  readonly record: boolean;
}

/**
 * Decides `request` against the resource's admissions in the window before `request.at` (in any
 * order) and its block, if one lasts past `request.at`.
 *
 * @example
 * const { decision, record } = decideRate({ resource: 'openai', id: 'r1/a#1', at, requestsPerMinute: 5 }, rows, undefined);
 */
export function decideRate(
  request: RateRequest,
  window: readonly RateRow[],
  blockedUntil: number | undefined,
): RateVerdict {
  // Asked again under an id it admitted (a host that died mid-attempt): counted once, even
  // when the window has filled or a 429 came since.
  if (window.some((row) => row.id === request.id))
    return { decision: { admitted: true }, record: false };
  if (blockedUntil !== undefined)
    return { decision: { admitted: false, until: blockedUntil, reason: 'blocked' }, record: false };
  // Oldest first, ties by id in byte order: the order every store's rows come back in.
  const rows = [...window].sort((a, b) => a.at - b.at || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const refusals: { until: number; reason: 'requests' | 'tokens' }[] = [];
  const rpm = request.requestsPerMinute;
  if (rpm !== undefined && rows.length >= rpm) {
    // Room comes when the oldest of the last `rpm` admissions leaves the window.
    refusals.push({ until: rows[rows.length - rpm]!.at + RATE_HOLD_MS, reason: 'requests' });
  }
  const tpm = request.tokensPerMinute;
  if (tpm !== undefined) {
    // At least one token, so an attempt that reserves none still counts against a full window;
    // at most the whole minute's, so a reservation larger than it is admitted into an empty one
    // instead of never.
    const need = Math.min(Math.max(request.reserveTokens ?? 0, 1), tpm);
    let sum = rows.reduce((total, row) => total + row.tokens, 0);
    if (sum + need > tpm) {
      let until = rows.at(-1)?.at ?? request.at;
      for (const row of rows) {
        sum -= row.tokens;
        if (sum + need <= tpm) {
          until = row.at;
          break;
        }
      }
      refusals.push({ until: until + RATE_HOLD_MS, reason: 'tokens' });
    }
  }
  const later = refusals.reduce<(typeof refusals)[number] | undefined>(
    (a, b) => (a === undefined || b.until > a.until ? b : a),
    undefined,
  );
  if (later !== undefined) return { decision: { admitted: false, ...later }, record: false };
  return { decision: { admitted: true }, record: true };
}
