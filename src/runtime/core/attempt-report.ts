import { deepFreeze } from './freeze.js';
import type { Activation, AttemptReport, Snapshot } from './snapshot.js';

/** What a run has booked of its attempts: the spend and the quarantine. */
export interface Books {
  readonly spent: Snapshot['spent'];
  readonly quarantine: Snapshot['quarantine'];
}

/**
 * Books what an attempt reported: its usage into the run's spend (tokens are spent whether or
 * not the attempt succeeded), its quarantined outputs into the run's quarantine when
 * `booksQuarantine` (a completion's; a failure's outputs were never accepted).
 *
 * @example
 * const books = booked({ spent, quarantine }, activation, event, true);
 */
export function booked(
  books: Books,
  activation: Activation,
  report: AttemptReport,
  booksQuarantine: boolean,
): Books {
  const { usage, quarantine } = report;
  let { spent, quarantine: kept } = books;
  if (usage !== undefined) {
    spent = {
      inputTokens: spent.inputTokens + usage.inputTokens,
      outputTokens: spent.outputTokens + usage.outputTokens,
      costUsd: spent.costUsd + (usage.costUsd ?? 0),
    };
  }
  if (booksQuarantine && quarantine !== undefined && quarantine.length > 0) {
    const { node, id } = activation;
    kept = [...kept, ...quarantine.map((q) => deepFreeze({ node, activation: id, ...q }))];
  }
  return { spent, quarantine: kept };
}
